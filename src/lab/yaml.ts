/**
 * Strict YAML loading for lab manifests: YAML 1.2 core schema only, one document, no
 * directives, no merge keys, no duplicate keys (comparing keys by their string form, so `1` and
 * `"1"` collide), no tags outside the core schema, only scalar keys, nesting at most
 * {@link MAX_LAB_DEPTH} levels, and few, small aliases. Every rejection names the problem and its
 * `line:column` (test/fixtures/cases/README.md "YAML lab manifests").
 *
 * Every pass is linear in the text: the lexical pass stops at the first lexeme that breaks a
 * rule (yaml-scan.ts), the structural pass is one iterative walk (yaml-walk.ts), and field
 * lookups for messages index each mapping's keys once.
 *
 * The loaded document is kept so later validation errors can point at the line of a field.
 */
import { Composer, isAlias, isMap, isScalar, isSeq, LineCounter, type Pair, parseDocument, type Node as YamlNode } from "yaml";
import { errorMessage } from "../errors.ts";
import { MAX_LAB_DEPTH, scanLabYaml } from "./yaml-scan.ts";
import { MAX_ALIAS_EXPANSION, MAX_LAB_ALIASES, walkLabYaml } from "./yaml-walk.ts";

export { MAX_ALIAS_EXPANSION, MAX_LAB_ALIASES, MAX_LAB_DEPTH };

/**
 * The yaml package's own alias guard, set explicitly rather than left to its default: while
 * converting to plain values it refuses an anchor whose uses times the aliases inside it exceed
 * this. The structural walk refuses alias bombs first with a located message; this is the
 * second line.
 */
export const MAX_ALIAS_COUNT = 100;

/** A successfully loaded YAML document. */
export interface StrictYaml {
  /** The plain JS value of the document (maps become objects, sequences arrays). */
  value: unknown;
  /** Finds the 1-based line/column of a field path (and optionally one key of a map there). */
  locate(path: readonly PropertyKey[], key?: string): { line: number; col: number } | undefined;
  /** The source text of the scalar at `path` as written (e.g. `1.10`), if it is a scalar. */
  sourceOf(path: readonly PropertyKey[]): string | undefined;
}

/** A YAML-level rejection: message already carries `line:col`. */
export interface YamlProblem {
  line: number;
  col: number;
  message: string;
}

/**
 * Parses `text` strictly. Returns the document or the first problem (lexical problems —
 * directives, extra documents, too deep a nesting — first, then syntax, then structure).
 */
export function loadStrictYaml(text: string): { ok: true; yaml: StrictYaml } | { ok: false; problem: YamlProblem } {
  const lc = new LineCounter();
  const at = (offset: number) => lc.linePos(offset);

  // 1. Lexical: directives, document count and depth, from the CST (parsed once, composed below).
  const scanned = scanLabYaml(text, lc);
  if (!scanned.ok) return fail(at(scanned.problem.offset), scanned.problem.what);

  // 2. Compose: YAML 1.2 core schema, merge keys off. Duplicate keys are checked below rather
  //    than with the library's `uniqueKeys`, whose default compares read values strictly (so
  //    `1` and `"1"` would pass) and whose message names neither key nor first occurrence.
  const options = {
    version: "1.2",
    schema: "core",
    merge: false,
    uniqueKeys: false,
    prettyErrors: true,
    strict: true,
    keepSourceTokens: false,
  } as const;
  const composed = Array.from(new Composer(options).compose(scanned.tokens, true, text.length));
  const doc = composed[0] ?? parseDocument("", options);
  if (composed.length > 1) return fail({ line: 1, col: 1 }, "more than one YAML document: a lab file holds exactly one document");
  const firstError = doc.errors[0];
  if (firstError) return fail(firstError.linePos?.[0] ?? at(firstError.pos[0]), `YAML syntax error: ${firstLine(firstError.message)}`);
  const firstWarning = doc.warnings[0];
  if (firstWarning) {
    return fail(
      firstWarning.linePos?.[0] ?? at(firstWarning.pos[0]),
      `YAML problem: ${firstLine(firstWarning.message)} (labs use the YAML 1.2 core schema only)`,
    );
  }

  // 3. Structural rules: scalar keys, no merge keys, no duplicate keys, core tags, small aliases.
  const walked = walkLabYaml(doc, text, (offset) => at(offset).line);
  if (!walked.ok) return fail(at(walked.problem.offset), walked.problem.what);
  const { aliasTargets } = walked.walk;

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    return fail({ line: 1, col: 1 }, `YAML could not be expanded: ${errorMessage(e)}`);
  }

  return { ok: true, yaml: strictYamlOf(doc.contents, text, value, aliasTargets, at) };
}

/**
 * The loaded document (root node `root`) with its field lookups: a path steps through aliases
 * (via the walk's alias targets, never the library's per-alias document search), and each
 * mapping's keys are indexed on first use, so locating a field costs one step per segment.
 */
function strictYamlOf(
  root: unknown,
  text: string,
  value: unknown,
  aliasTargets: ReadonlyMap<unknown, YamlNode>,
  at: (offset: number) => { line: number; col: number },
): StrictYaml {
  const keyIndex = new WeakMap<object, Map<string, Pair>>();
  const resolve = (n: unknown): unknown => (isAlias(n) ? aliasTargets.get(n) : n);
  // The nodes along `path` that exist, root first: the last is the node at `path` when the
  // whole path exists, else its nearest existing ancestor.
  const nodesAlong = (path: readonly PropertyKey[]): { nodes: unknown[]; complete: boolean } => {
    let node: unknown = resolve(root);
    const nodes: unknown[] = [];
    for (const seg of path) {
      if (node === undefined || node === null) return { nodes, complete: false };
      nodes.push(node);
      if (isSeq(node)) node = typeof seg === "number" ? resolve(node.items[seg]) : undefined;
      else if (isMap(node)) node = resolve(pairOf(node, String(seg), keyIndex)?.value);
      else return { nodes, complete: false };
    }
    if (node === undefined || node === null) return { nodes, complete: false };
    nodes.push(node);
    return { nodes, complete: true };
  };
  const nodeAt = (path: readonly PropertyKey[]): unknown => {
    const { nodes, complete } = nodesAlong(path);
    return complete ? nodes[nodes.length - 1] : undefined;
  };
  const yaml: StrictYaml = {
    value,
    locate(path, key) {
      const { nodes, complete } = nodesAlong(path);
      const node = complete ? nodes[nodes.length - 1] : undefined;
      if (key !== undefined && isMap(node)) {
        const k = pairOf(node, key, keyIndex)?.key as YamlNode | undefined;
        if (k?.range) return at(k.range[0]);
      }
      const n = node as YamlNode | undefined;
      if (n && (isMap(n) || isSeq(n) || isScalar(n)) && n.range) return at(n.range[0]);
      // Fall back to the nearest existing ancestor collection.
      for (let i = complete ? nodes.length - 2 : nodes.length - 1; i >= 0; i--) {
        const anc = nodes[i] as YamlNode | undefined;
        if (anc && (isMap(anc) || isSeq(anc)) && anc.range) return at(anc.range[0]);
      }
      return undefined;
    },
    sourceOf(path) {
      const n = nodeAt(path);
      if (isScalar(n) && n.range) return text.slice(n.range[0], n.range[1]).trim();
      return undefined;
    },
  };
  return yaml;
}

/** The pair of `map` whose key reads as `key`, indexing the map's keys on first use. */
function pairOf(map: { items: Pair[] }, key: string, index: WeakMap<object, Map<string, Pair>>): Pair | undefined {
  let byKey = index.get(map);
  if (byKey === undefined) {
    byKey = new Map();
    for (const pair of map.items) {
      if (isScalar(pair.key)) {
        const k = String(pair.key.value);
        if (!byKey.has(k)) byKey.set(k, pair);
      }
    }
    index.set(map, byKey);
  }
  return byKey.get(key);
}

/** The first line of a library message, without its trailing `at line L, column C`. */
function firstLine(message: string): string {
  return message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
}

function fail(p: { line: number; col: number }, what: string): { ok: false; problem: YamlProblem } {
  return { ok: false, problem: { line: p.line, col: p.col, message: `${p.line}:${p.col}: ${what}` } };
}
