/**
 * Structural figures of the tree, recomputable by anyone: `bun scripts/figures.ts [--over N] [--list]`.
 *
 * Prints, one per line:
 * - `functions over N lines in src: K` — every function-like node (declarations, methods,
 *   arrows, function expressions, accessors, constructors) in `src/**\/*.ts` whose span, from
 *   its first to its last line, exceeds N lines (default 100), found with the TypeScript
 *   compiler's syntax tree. A nested function is counted on its own as well as inside its
 *   parent, since either one is a long piece of code to read.
 * - `lines of src/lanes/local-guest: L` — physical lines of its `.ts` files.
 * - `duplicates src: P pairs (B boilerplate)` and the same for `test`, when the `duplicates`
 *   tool is on PATH (otherwise the line says it was not found).
 *
 * `--list` prints each long function as `file:line name (lines)` too.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Glob } from "bun";
import ts from "typescript";

const ROOT = resolve(import.meta.dir, "..");

/** A function-like node's display name, or `<anonymous>` with the variable or property it is bound to when there is one. */
function nameOf(node: ts.Node): string {
  const n = (node as { name?: ts.Node }).name;
  if (n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n))) return n.text;
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) return p.name.text;
  if (p && ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) return p.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  return "<anonymous>";
}

/** The functions of one file longer than `over` lines, as `{ line, name, lines }` (line is 1-based). */
export function longFunctions(path: string, text: string, over: number): { line: number; name: string; lines: number }[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: { line: number; name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > over) out.push({ line: first + 1, name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function files(under: string): string[] {
  return [...new Glob("**/*.ts").scanSync({ cwd: join(ROOT, under) })].sort();
}

/** The pair counts `duplicates` prints for one folder, or undefined when the tool is missing. */
function duplicatePairs(folder: string): { pairs: number; boilerplate: number } | undefined {
  if (!Bun.which("duplicates")) return undefined;
  const r = Bun.spawnSync(["duplicates", "--repo", join(ROOT, folder), "--seconds", "120"], { stdout: "pipe", stderr: "pipe" });
  const head = r.stdout.toString();
  if (/^no duplicates/m.test(head)) return { pairs: 0, boilerplate: 0 };
  const pairs = /(\d+) pairs? of places/.exec(head);
  if (!pairs) return undefined;
  const boilerplate = /(\d+) of those marked boilerplate/.exec(head.split("\n")[0] ?? "");
  return { pairs: Number(pairs[1]), boilerplate: Number(boilerplate?.[1] ?? 0) };
}

function main(): void {
  const { values } = parseArgs({ options: { over: { type: "string", default: "100" }, list: { type: "boolean", default: false } } });
  const over = Number(values.over);
  const long: string[] = [];
  for (const f of files("src")) {
    for (const fn of longFunctions(f, readFileSync(join(ROOT, "src", f), "utf8"), over)) long.push(`src/${f}:${fn.line} ${fn.name} (${fn.lines})`);
  }
  console.log(`functions over ${over} lines in src: ${long.length}`);
  if (values.list) for (const l of long) console.log(`  ${l}`);
  const guestLines = files("src/lanes/local-guest").reduce(
    (n, f) => n + readFileSync(join(ROOT, "src/lanes/local-guest", f), "utf8").split("\n").length - 1,
    0,
  );
  console.log(`lines of src/lanes/local-guest: ${guestLines}`);
  for (const folder of ["src", "test"]) {
    const d = duplicatePairs(folder);
    console.log(
      d
        ? `duplicates ${folder}: ${d.pairs} pairs (${d.boilerplate} boilerplate, ${d.pairs - d.boilerplate} others)`
        : `duplicates ${folder}: the duplicates tool was not found`,
    );
  }
}

if (import.meta.main) main();
