/**
 * The layer rules of ARCHITECTURE.md that the import graph can show, checked over every
 * `src/**\/*.ts` file parsed with the TypeScript compiler (imports, re-exports, dynamic
 * `import()` and `require`, type-only ones marked):
 *
 * - no import cycle between files (type-only imports included: a cycle of types is still two
 *   modules that cannot be understood apart);
 * - no cycle between concepts (a concept is the first folder under `src/`, or a top-level
 *   file: a folder may lean on its own subfolders and they on it, e.g. `routes/` and
 *   `routes/terminal/`, but `lab/` → `actors/registry.ts` with `actors/x/` → `lab/` is a cycle);
 * - every import between concepts points down the rank order declared once, in the code block
 *   of the Layers section of docs/ARCHITECTURE.md (one rank a line, top first);
 * - `cli/` imports only the concepts in {@link CLI_MAY_IMPORT}: it parses and prints, and the
 *   work it calls lives below it;
 * - Responses request bodies are built only in `models/` (an object literal with a Responses
 *   request field such as `max_output_tokens`, or a `type` of a Responses input part);
 * - the pure cores (`browser-control/`, `png/`, `broker/`, the verify core) reach, through
 *   their runtime imports, no file-system, network or process module and no Bun or `fetch` I/O;
 * - only `docker/` talks to the Docker socket; only `sandbox/e2b` and the E2B lanes import the
 *   E2B SDKs; only `models/` imports `openai`; lanes never import each other; actors never
 *   import lanes;
 * - the actor registry (`actor-registry/`) is pure data below `lab/` and `bundle/`: it imports
 *   nothing but its own types and the error class;
 * - host code shares only guest/host-guest.ts with the guest (the CLI may load the guest's
 *   entry point for `humanish guest serve`), and the guest imports no host runtime code.
 *
 * Each violation names the offending chain of files, e.g.
 * `cycle: lab/routing.ts → actor-registry/registry.ts → lab/schema.ts → lab/routing.ts`.
 * The analysis functions are exercised on small synthetic graphs first, so a rule that could
 * never fire is caught too.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";
import ts from "typescript";

const SRC = resolve(import.meta.dir, "../src");
const ARCHITECTURE_MD = resolve(import.meta.dir, "../docs/ARCHITECTURE.md");

/**
 * The concepts `cli/` may import. It turns argv into a command and a result into output; the
 * checks, studies and servers it starts live in these. Participants (`actors/`), lanes,
 * sandboxes and the terminal seat are reached only through them.
 */
const CLI_MAY_IMPORT: readonly string[] = [
  "observer",
  "init",
  "doctor",
  "routes",
  "study",
  "analysis",
  "adapters",
  "report",
  "compare",
  "export",
  "env",
  "models",
  "runtime",
  "bundle",
  "lab",
  "actor-registry",
  "guest",
  "docker",
  "secrets",
  "text",
  "bytes",
  "errors",
  "version",
];

/** Top-level fields of a Responses request body: only `models/` writes them. */
const RESPONSES_REQUEST_FIELDS = new Set(["max_output_tokens", "previous_response_id", "tool_choice", "parallel_tool_calls"]);
/** `type` values of Responses input parts and formats: only `models/` builds them. */
const RESPONSES_PART_TYPES = new Set(["input_text", "input_image", "computer_call_output", "function_call_output", "json_schema"]);

/**
 * Files that hold the pure verify core. Any file matching `bundle/verify*​/core*.ts` counts too;
 * this list is for a core that moves elsewhere.
 */
const VERIFY_CORE_FILES: readonly string[] = [];

/** Modules that do I/O: a pure core must not reach them at run time. */
const IO_MODULES = new Set([
  "fs",
  "fs/promises",
  "net",
  "child_process",
  "http",
  "https",
  "http2",
  "tls",
  "dgram",
  "dns",
  "dns/promises",
  "worker_threads",
  "cluster",
  "readline",
  "os",
  "bun:sqlite",
  "bun:ffi",
]);

/** `Bun.<member>` uses that do I/O. */
const BUN_IO = new Set(["file", "write", "spawn", "spawnSync", "connect", "listen", "serve", "udpSocket", "$", "stdin", "stdout", "stderr", "openInEditor"]);

/** One import of a file: the specifier as written, its resolution, and whether only types come through. */
interface Import {
  spec: string;
  /** A `src/`-relative file path, or `module:<name>` for a package or built-in, or `asset:<path>`. */
  target: string;
  typeOnly: boolean;
}

/** What the parse of one file found. */
interface FileFacts {
  imports: Import[];
  /** I/O uses in the file's own code: `Bun.spawn`, `fetch(`, `process.env`. */
  ioUses: string[];
  /** Signs of a client of a Unix-socket HTTP endpoint: `docker.sock` literals, `fetch({unix})`, `request({socketPath})`. */
  socketUses: string[];
  /** Pieces of a Responses request body built here: `max_output_tokens: …`, `type: "input_image"`. */
  wireUses: string[];
}

function resolveSpec(from: string, spec: string): string {
  if (!spec.startsWith(".")) return `module:${spec.replace(/^node:/, "")}`;
  const abs = resolve(dirname(join(SRC, from)), spec);
  for (const candidate of [abs, `${abs}.ts`, join(abs, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) {
      const rel = relative(SRC, candidate).split("\\").join("/");
      return candidate.endsWith(".ts") && !rel.startsWith("..") ? rel : `asset:${rel}`;
    }
  }
  return `asset:${relative(SRC, abs)}`;
}

/** Parses one file's imports and I/O uses from its syntax tree. */
export function factsOf(path: string, text: string): FileFacts {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports: Import[] = [];
  const ioUses: string[] = [];
  const socketUses: string[] = [];
  const wireUses: string[] = [];
  const add = (spec: string, typeOnly: boolean) => imports.push({ spec, target: resolveSpec(path, spec), typeOnly });
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier.text, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node)) {
      const [arg] = node.arguments;
      const callee = node.expression;
      if ((callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === "require")) && arg && ts.isStringLiteralLike(arg)) {
        add(arg.text, false);
      }
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : "";
      if (ts.isIdentifier(callee) && name === "fetch") ioUses.push(`fetch() at line ${line(sf, node)}`);
      // A client request over a Unix socket: Bun's `fetch(url, {unix})` or Node's
      // `request({socketPath})`. Serving on one (`Bun.serve({unix})`) is not talking to Docker.
      if (name === "fetch" || name === "request" || name === "get") {
        for (const opt of node.arguments.filter(ts.isObjectLiteralExpression)) {
          for (const prop of opt.properties) {
            const key = prop.name && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name)) ? prop.name.text : "";
            if (key === "unix" || key === "socketPath") socketUses.push(`${name}({${key}}) at line ${line(sf, prop)}`);
          }
        }
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const obj = node.expression.text;
      const member = node.name.text;
      if (obj === "Bun" && BUN_IO.has(member)) ioUses.push(`Bun.${member} at line ${line(sf, node)}`);
      if (obj === "process" && (member === "env" || member === "stdout" || member === "stderr" || member === "stdin")) {
        ioUses.push(`process.${member} at line ${line(sf, node)}`);
      }
    } else if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
      const key = node.name.text;
      if (RESPONSES_REQUEST_FIELDS.has(key)) wireUses.push(`${key}: at line ${line(sf, node)}`);
      if (key === "type" && ts.isStringLiteralLike(node.initializer) && RESPONSES_PART_TYPES.has(node.initializer.text)) {
        wireUses.push(`type: "${node.initializer.text}" at line ${line(sf, node)}`);
      }
    } else if (ts.isStringLiteralLike(node) && node.text.includes("docker.sock")) {
      socketUses.push(`"docker.sock" at line ${line(sf, node)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { imports, ioUses, socketUses, wireUses };
}

function line(sf: ts.SourceFile, node: ts.Node): number {
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

/** Every `src/` TypeScript file (declaration files excluded), `src/`-relative, sorted. */
function sourceFiles(): string[] {
  return [...new Glob("**/*.ts").scanSync({ cwd: SRC })]
    .filter((f) => !f.endsWith(".d.ts"))
    .map((f) => f.split("\\").join("/"))
    .sort();
}

type Graph = ReadonlyMap<string, readonly string[]>;

/**
 * Strongly connected components of more than one node (or a node importing itself), by
 * Tarjan's algorithm with an explicit stack; each component in a stable order.
 */
export function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1]!;
      const edges = graph.get(top.v) ?? [];
      if (top.i < edges.length) {
        const w = edges[top.i++]!;
        if (!graph.has(w)) continue;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(top.v)!));
      if (low.get(top.v) === index.get(top.v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.v);
        if (comp.length > 1 || (graph.get(top.v) ?? []).includes(top.v)) out.push(comp.sort());
      }
    }
  }
  return out;
}

/** One closed path through `members` starting at its first node (breadth-first, so short). */
export function cyclePath(graph: Graph, members: readonly string[]): string[] {
  const inside = new Set(members);
  const start = members[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q]!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = prev.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...members, start];
}

/** The chain of imports from `from` to the first node satisfying `bad` (breadth-first), or undefined. */
export function chainTo(graph: Graph, from: string, bad: (node: string) => boolean): string[] | undefined {
  const prev = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q]!;
    if (bad(v)) {
      const path: string[] = [];
      for (let u: string | null = v; u !== null; u = prev.get(u) ?? null) path.unshift(u);
      return path;
    }
    for (const w of graph.get(v) ?? []) {
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return undefined;
}

/** The concept of a `src/`-relative file: its first folder, or the file's own name without `.ts` at the top level. */
export function conceptOf(file: string): string {
  const i = file.indexOf("/");
  return i < 0 ? file.replace(/\.ts$/, "") : file.slice(0, i);
}

/** The concept graph of a file graph (edges between files outside it dropped) and one file import witnessing each edge. */
function conceptGraph(files: ReadonlyMap<string, readonly string[]>): { graph: Map<string, string[]>; witness: Map<string, string> } {
  const graph = new Map<string, string[]>();
  const witness = new Map<string, string>();
  for (const [file, targets] of files) {
    if (file.startsWith("module:") || file.startsWith("asset:")) continue;
    const a = conceptOf(file);
    if (!graph.has(a)) graph.set(a, []);
    for (const t of targets) {
      if (!files.has(t) || t.startsWith("module:") || t.startsWith("asset:")) continue;
      const b = conceptOf(t);
      if (a === b) continue;
      if (!graph.get(a)!.includes(b)) graph.get(a)!.push(b);
      if (!witness.has(`${a}\u0000${b}`)) witness.set(`${a}\u0000${b}`, `${file} → ${t}`);
    }
  }
  return { graph, witness };
}

/** Cycles between concepts, each as a path with one import witnessing every step. */
export function conceptCycles(files: ReadonlyMap<string, readonly string[]>): string[] {
  const { graph, witness } = conceptGraph(files);
  const out: string[] = [];
  for (const comp of cycles(graph)) {
    const path = cyclePath(graph, comp);
    const steps = path.slice(1).map((b, i) => witness.get(`${path[i]}\u0000${b}`)!);
    out.push(`concept cycle ${path.map((f) => `${f}/`).join(" → ")} (${steps.join("; ")})`);
  }
  return out;
}

/**
 * The rank order declared in the Layers code block of ARCHITECTURE.md: each line that starts
 * at column 0 with `name/` or `name.ts` (several comma-separated on one line share a rank)
 * gives its concepts the next rank, top first. Returns concept → rank (0 is the top).
 */
export function declaredRanks(markdown: string): Map<string, number> {
  const section = markdown.slice(markdown.indexOf("\n## Layers"));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const ranks = new Map<string, number>();
  let rank = 0;
  for (const l of block.split("\n")) {
    const head = /^((?:[a-z][a-z0-9-]*(?:\/|\.ts)(?:, )?)+)/.exec(l)?.[1];
    if (!head) continue;
    for (const name of head
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean))
      ranks.set(name.replace(/\/$|\.ts$/, ""), rank);
    rank++;
  }
  return ranks;
}

/** Concept imports that do not point strictly down `ranks`, and concepts the order does not declare. */
export function rankViolations(files: ReadonlyMap<string, readonly string[]>, ranks: ReadonlyMap<string, number>): string[] {
  const { graph, witness } = conceptGraph(files);
  const out: string[] = [];
  for (const c of [...graph.keys()].sort()) if (!ranks.has(c)) out.push(`${c}/ has no rank in the Layers order of docs/ARCHITECTURE.md`);
  for (const [a, targets] of graph) {
    for (const b of targets) {
      const ra = ranks.get(a);
      const rb = ranks.get(b);
      if (ra !== undefined && rb !== undefined && rb <= ra) out.push(`${a}/ → ${b}/ points up the Layers order (${witness.get(`${a}\u0000${b}`)})`);
    }
  }
  return out.sort();
}

// -------------------------------------------------------------------------------------------
// The rules, over the real tree

interface Tree {
  facts: Map<string, FileFacts>;
  /** Every import edge (types included), file → target. */
  all: Map<string, string[]>;
  /** Runtime edges only (type-only imports dropped). */
  runtime: Map<string, string[]>;
}

function loadTree(): Tree {
  const facts = new Map<string, FileFacts>();
  const all = new Map<string, string[]>();
  const runtime = new Map<string, string[]>();
  for (const f of sourceFiles()) {
    const fx = factsOf(f, readFileSync(join(SRC, f), "utf8"));
    facts.set(f, fx);
    all.set(f, [...new Set(fx.imports.map((i) => i.target))]);
    runtime.set(f, [...new Set(fx.imports.filter((i) => !i.typeOnly).map((i) => i.target))]);
  }
  // Packages and built-ins are leaves, so chains can end at them.
  for (const g of [all, runtime]) for (const targets of [...g.values()]) for (const t of targets) if (!g.has(t)) g.set(t, []);
  return { facts, all, runtime };
}

/** Files of the pure cores: the folders that must stay pure and the verify core. */
function pureRoots(files: readonly string[]): string[] {
  return files.filter(
    (f) =>
      f.startsWith("browser-control/") ||
      f.startsWith("png/") ||
      f.startsWith("broker/") ||
      /^bundle\/verify[^/]*\/core[^/]*\.ts$/.test(f) ||
      VERIFY_CORE_FILES.includes(f),
  );
}

function purityViolations(tree: Tree): string[] {
  const files = [...tree.facts.keys()];
  const ioModule = (n: string) => n.startsWith("module:") && IO_MODULES.has(n.slice("module:".length));
  const ioImports = (f: string) => (tree.runtime.get(f) ?? []).filter(ioModule).map((m) => m.slice("module:".length));
  // A file is I/O when it does I/O itself or imports an I/O module at run time.
  const isIo = (n: string) => ioModule(n) || (tree.facts.get(n)?.ioUses.length ?? 0) > 0 || ioImports(n).length > 0;
  const out: string[] = [];
  for (const root of pureRoots(files)) {
    const chain = chainTo(tree.runtime, root, isIo);
    if (!chain) continue;
    const last = chain[chain.length - 1]!;
    const own = [...ioImports(last).map((m) => `imports ${m}`), ...(tree.facts.get(last)?.ioUses ?? [])];
    const what = ioModule(last) ? "" : ` does I/O (${own.join(", ")})`;
    out.push(`pure core ${root} reaches I/O: ${chain.join(" → ")}${what}`);
  }
  return out;
}

/** Rule violations on direct imports: (file, target) pairs a layer rule forbids. */
function importViolations(tree: Tree): string[] {
  const out: string[] = [];
  const lane = (f: string) => /^lanes\/([^/]+)\//.exec(f)?.[1];
  for (const [file, fx] of tree.facts) {
    for (const imp of fx.imports) {
      const t = imp.target;
      const pkg = t.startsWith("module:") ? t.slice("module:".length) : undefined;
      if (
        pkg !== undefined &&
        (pkg === "e2b" || pkg.startsWith("@e2b/")) &&
        !(file === "sandbox/e2b.ts" || file.startsWith("sandbox/e2b/") || /^lanes\/e2b-[^/]+\//.test(file))
      ) {
        out.push(`${file} imports ${pkg}: only sandbox/e2b and the E2B lanes use the E2B SDKs`);
      }
      if (pkg !== undefined && (pkg === "openai" || pkg.startsWith("openai/")) && !file.startsWith("models/")) {
        out.push(`${file} imports ${pkg}: only models/ talks to OpenAI`);
      }
      if (pkg !== undefined) continue;
      const fromLane = lane(file);
      const toLane = lane(t);
      if (fromLane !== undefined && toLane !== undefined && fromLane !== toLane) out.push(`${file} → ${t}: lanes never import each other`);
      if (file.startsWith("actors/") && t.startsWith("lanes/")) out.push(`${file} → ${t}: actors never import lanes (they are handed an executor or sandbox)`);
      if (t.startsWith("guest/") && !file.startsWith("guest/") && t !== "guest/host-guest.ts" && !(file.startsWith("cli/") && t === "guest/index.ts")) {
        out.push(`${file} → ${t}: host code shares only guest/host-guest.ts with the guest`);
      }
      if (file.startsWith("guest/") && t.startsWith("runtime/")) out.push(`${file} → ${t}: the guest imports no host runtime code`);
    }
    if (!file.startsWith("docker/") && fx.socketUses.length > 0) {
      out.push(`${file} talks to a Unix-socket endpoint (${fx.socketUses.join(", ")}): only docker/ talks to the Docker socket`);
    }
  }
  return out;
}

/** The actor registry's whole import closure stays in `actors/*.ts` (not its subfolders) and `errors.ts`. */
function registryViolations(tree: Tree): string[] {
  const out: string[] = [];
  const allowed = (n: string) => n === "errors.ts" || /^actor-registry\/[^/]+\.ts$/.test(n);
  for (const root of ["actor-registry/registry.ts", "actor-registry/types.ts"]) {
    if (!tree.facts.has(root)) {
      out.push(`${root} is missing: the actor registry is pure data in actor-registry/registry.ts and actor-registry/types.ts`);
      continue;
    }
    const chain = chainTo(tree.all, root, (n) => !allowed(n));
    if (chain) out.push(`the actor registry must be pure data below lab/ and bundle/: ${chain.join(" → ")}`);
  }
  return out;
}

describe("the analysis finds what it should (synthetic graphs)", () => {
  const g = (edges: Record<string, string[]>): Graph => new Map(Object.entries(edges));

  test("a file cycle is found and printed as a closed path", () => {
    const graph = g({ "a.ts": ["b.ts"], "b.ts": ["c.ts"], "c.ts": ["a.ts"], "d.ts": ["a.ts"] });
    const found = cycles(graph);
    expect(found).toEqual([["a.ts", "b.ts", "c.ts"]]);
    expect(cyclePath(graph, found[0]!)).toEqual(["a.ts", "b.ts", "c.ts", "a.ts"]);
    expect(cycles(g({ "a.ts": ["b.ts"], "b.ts": [] }))).toEqual([]);
    expect(cycles(g({ "a.ts": ["a.ts"] }))).toEqual([["a.ts"]]);
  });

  test("a cycle between concepts is refused even through different folders; parent ↔ subfolder of one concept is not", () => {
    // No folder cycle here (actors/ and actors/computer-use/ are two folders), but one of concepts.
    const crossing = conceptCycles(
      g({ "lab/routing.ts": ["actors/registry.ts"], "actors/registry.ts": [], "actors/computer-use/seat.ts": ["lab/schema.ts"], "lab/schema.ts": [] }),
    );
    expect(crossing).toEqual(["concept cycle actors/ → lab/ → actors/ (actors/computer-use/seat.ts → lab/schema.ts; lab/routing.ts → actors/registry.ts)"]);
    expect(conceptCycles(g({ "routes/index.ts": ["routes/terminal/run.ts"], "routes/terminal/run.ts": ["routes/types.ts"], "routes/types.ts": [] }))).toEqual(
      [],
    );
    expect(conceptOf("errors.ts")).toBe("errors");
  });

  test("the declared rank order is read from the Layers block and an upward import is named", () => {
    const md = "# x\n\n## Layers\ntext\n\n```\ncli/   top\n       continued words/\nlab/   middle\nsecrets/, errors.ts — leaves\n```\n";
    const ranks = declaredRanks(md);
    expect([...ranks]).toEqual([
      ["cli", 0],
      ["lab", 1],
      ["secrets", 2],
      ["errors", 2],
    ]);
    const files = g({
      "cli/a.ts": ["lab/b.ts"],
      "lab/b.ts": ["errors.ts", "cli/c.ts"],
      "errors.ts": [],
      "cli/c.ts": [],
      "secrets/d.ts": ["errors.ts"],
      "new/e.ts": [],
    });
    expect(rankViolations(files, ranks)).toEqual([
      "lab/ → cli/ points up the Layers order (lab/b.ts → cli/c.ts)",
      "new/ has no rank in the Layers order of docs/ARCHITECTURE.md",
      "secrets/ → errors/ points up the Layers order (secrets/d.ts → errors.ts)",
    ]);
  });

  test("a Responses body built outside models/ is seen", () => {
    const fx = factsOf("actors/x.ts", `const body = { max_output_tokens: 5, input: [{ type: "input_image", image_url: u }], note: "tool_choice" };\n`);
    expect(fx.wireUses.map((u) => u.split(" at ")[0])).toEqual(["max_output_tokens:", 'type: "input_image"']);
  });

  test("a chain to I/O is found through intermediate files", () => {
    const graph = g({ "png/a.ts": ["x/b.ts"], "x/b.ts": ["module:fs"], "module:fs": [] });
    expect(chainTo(graph, "png/a.ts", (n) => n === "module:fs")).toEqual(["png/a.ts", "x/b.ts", "module:fs"]);
  });

  test("the parser sees type-only imports, re-exports, dynamic imports and I/O uses", () => {
    const fx = factsOf(
      "x/a.ts",
      `import type { A } from "./t.ts";
import { type B, c } from "node:fs";
export { d } from "node:net";
export type { E } from "./e.ts";
const m = await import("node:child_process");
Bun.spawn(["true"]);
await fetch("http://x", { unix: "/var/run/docker.sock" });
const v = process.env.X;
Bun.serve({ unix: "/tmp/gateway.sock", fetch: () => new Response() });
`,
    );
    expect(fx.imports.map((i) => [i.spec, i.typeOnly])).toEqual([
      ["./t.ts", true],
      ["node:fs", false],
      ["node:net", false],
      ["./e.ts", true],
      ["node:child_process", false],
    ]);
    expect(fx.ioUses.map((u) => u.split(" ")[0])).toEqual(["Bun.spawn", "fetch()", "process.env", "Bun.serve"]);
    // The docker.sock literal and the fetch over a Unix socket; serving on one is not a client.
    expect(fx.socketUses.map((u) => u.split(" ")[0])).toEqual(["fetch({unix})", '"docker.sock"']);
  });
});

describe("src/ keeps its layers (ARCHITECTURE.md)", () => {
  const tree = loadTree();

  test("the tree is parsed (files and imports found)", () => {
    expect(tree.facts.size).toBeGreaterThan(50);
    expect(tree.facts.get("lab/routing.ts")?.imports.length ?? 0).toBeGreaterThan(0);
  });

  test("no import cycle between files", () => {
    const found = cycles(tree.all).map((comp) => `cycle: ${cyclePath(tree.all, comp).join(" → ")}`);
    expect(found).toEqual([]);
  });

  test("no import cycle between concepts", () => {
    expect(conceptCycles(tree.all)).toEqual([]);
  });

  test("every import between concepts points down the Layers order of ARCHITECTURE.md", () => {
    const ranks = declaredRanks(readFileSync(ARCHITECTURE_MD, "utf8"));
    expect(ranks.size).toBeGreaterThan(20);
    expect(rankViolations(tree.all, ranks)).toEqual([]);
  });

  test("cli/ imports only what it may: it parses, calls down and prints", () => {
    const out: string[] = [];
    for (const [file, targets] of tree.all) {
      if (!file.startsWith("cli/")) continue;
      for (const t of targets) {
        if (t.startsWith("module:") || t.startsWith("asset:")) continue;
        const c = conceptOf(t);
        if (c !== "cli" && !CLI_MAY_IMPORT.includes(c)) out.push(`${file} → ${t}: cli/ may not import ${c}/`);
      }
    }
    expect(out).toEqual([]);
  });

  test("Responses request bodies are built only in models/", () => {
    const out = [...tree.facts].filter(([f, fx]) => !f.startsWith("models/") && fx.wireUses.length > 0).map(([f, fx]) => `${f}: ${fx.wireUses.join(", ")}`);
    expect(out).toEqual([]);
  });

  test("pure cores (browser-control/, png/, broker/, the verify core) reach no I/O", () => {
    expect(pureRoots([...tree.facts.keys()]).some((f) => f.startsWith("browser-control/"))).toBe(true);
    expect(purityViolations(tree)).toEqual([]);
  });

  test("docker/, E2B, OpenAI, lanes, actors and guest boundaries hold", () => {
    expect(importViolations(tree)).toEqual([]);
  });

  test("the actor registry (actor-registry/) is pure data below lab/ and bundle/", () => {
    expect(registryViolations(tree)).toEqual([]);
  });
});
