/**
 * The structural pass of lab YAML over the composed document: only scalar keys, no merge keys,
 * no duplicate keys (compared by their string form, so `1` and `"1"` collide), tags of the YAML
 * 1.2 core schema only, and aliases that stay small — each one resolves to an anchor written
 * before it outside itself, at most {@link MAX_LAB_ALIASES} of them, adding at most
 * {@link MAX_ALIAS_EXPANSION} nodes and no nesting beyond the depth bound once expanded (so a
 * "billion laughs" document is refused before anything expands it).
 *
 * One iterative pre-order walk with an explicit stack: linear in the number of nodes and free of
 * recursion (the library's own `visit` copies its ancestor path at every node, which is
 * quadratic in depth). Problems are found in source order, like a reader scanning the file.
 */
import { type Alias, type Document, isAlias, isMap, isScalar, isSeq, type Node as YamlNode } from "yaml";
import { clip } from "../text/tail.ts";
import { MAX_LAB_DEPTH } from "./yaml-scan.ts";

/** Most alias nodes (`*name`) a lab may hold. */
export const MAX_LAB_ALIASES = 100;
/** Most nodes all aliases of a lab may add once expanded (each alias adds its anchor's size). */
export const MAX_ALIAS_EXPANSION = 10_000;

/** A structural rejection: 0-based offset into the text and what is wrong. */
export interface WalkProblem {
  offset: number;
  what: string;
}

/** What the walk learnt: each alias node's anchored node (for locating fields through aliases). */
export interface WalkResult {
  aliasTargets: Map<Alias, YamlNode>;
}

const CORE_TAGS = new Set([
  "tag:yaml.org,2002:map",
  "tag:yaml.org,2002:seq",
  "tag:yaml.org,2002:str",
  "tag:yaml.org,2002:null",
  "tag:yaml.org,2002:bool",
  "tag:yaml.org,2002:int",
  "tag:yaml.org,2002:float",
]);

/** An entry of the walk stack: a node to enter, or a collection whose children are all done. */
type Frame = { node: YamlNode; depth: number; exit: boolean };

/**
 * Walks `doc` (already composed from `text`), returning the first problem in source order.
 * `lineOf` maps an offset to its 1-based line (for "first defined at line N").
 * `depth` of a frame counts the collections enclosing the node, the node itself included.
 */
export function walkLabYaml(
  doc: Document,
  text: string,
  lineOf: (offset: number) => number,
): { ok: true; walk: WalkResult } | { ok: false; problem: WalkProblem } {
  const root = doc.contents as YamlNode | null;
  const aliasTargets = new Map<Alias, YamlNode>();
  if (root === null) return { ok: true, walk: { aliasTargets } };
  const anchors = new Map<string, YamlNode>();
  // Expanded node count and height (collections on the longest downward path) of finished nodes.
  const size = new Map<YamlNode, number>();
  const height = new Map<YamlNode, number>();
  let aliases = 0;
  let expansion = 0;
  const stack: Frame[] = [{ node: root, depth: isMap(root) || isSeq(root) ? 1 : 0, exit: false }];

  while (stack.length > 0) {
    const { node, depth, exit } = stack.pop()!;
    if (exit) {
      let total = 1;
      let tallest = 0;
      for (const child of children(node)) {
        total += size.get(child) ?? 1;
        tallest = Math.max(tallest, height.get(child) ?? 0);
      }
      size.set(node, total);
      height.set(node, tallest + 1);
      continue;
    }
    if (isAlias(node)) {
      const offset = node.range?.[0] ?? 0;
      const target = anchors.get(node.source);
      if (target === undefined) return fail(offset, `alias \`*${node.source}\` has no anchor \`&${node.source}\` before it`);
      const targetSize = size.get(target);
      if (targetSize === undefined) return fail(offset, `alias \`*${node.source}\` is inside the value it names (a recursive alias cannot be expanded)`);
      if (++aliases > MAX_LAB_ALIASES) return fail(offset, `more than ${MAX_LAB_ALIASES} aliases: labs use at most ${MAX_LAB_ALIASES} (write the values out)`);
      expansion += targetSize;
      if (expansion > MAX_ALIAS_EXPANSION) {
        return fail(
          offset,
          `aliases expand to more than ${MAX_ALIAS_EXPANSION} values by here (an alias bomb); write the values out instead of nesting aliases`,
        );
      }
      const enclosing = depth;
      if (enclosing + (height.get(target) ?? 0) > MAX_LAB_DEPTH) {
        return fail(offset, `alias \`*${node.source}\` expands to a value nested deeper than ${MAX_LAB_DEPTH} levels`);
      }
      aliasTargets.set(node, target);
      size.set(node, targetSize);
      height.set(node, height.get(target) ?? 0);
      continue;
    }
    const tag = tagProblem(node, text);
    if (tag) return { ok: false, problem: tag };
    if (node.anchor) anchors.set(node.anchor, node);
    if (isScalar(node)) {
      size.set(node, 1);
      height.set(node, 0);
      continue;
    }
    if (isMap(node)) {
      const keys = keyProblem(node, text, lineOf);
      if (keys) return { ok: false, problem: keys };
    }
    stack.push({ node, depth, exit: true });
    const kids = children(node);
    for (let i = kids.length - 1; i >= 0; i--) {
      const child = kids[i]!;
      stack.push({ node: child, depth: isMap(child) || isSeq(child) ? depth + 1 : depth, exit: false });
    }
  }
  return { ok: true, walk: { aliasTargets } };
}

/** The child nodes of a collection in source order (a map's key then value, per pair). */
function children(node: YamlNode): YamlNode[] {
  const out: YamlNode[] = [];
  if (isSeq(node)) {
    for (const item of node.items) if (item !== null && typeof item === "object") out.push(item as YamlNode);
  } else if (isMap(node)) {
    for (const pair of node.items) {
      if (pair.key !== null && typeof pair.key === "object") out.push(pair.key as YamlNode);
      if (pair.value !== null && typeof pair.value === "object") out.push(pair.value as YamlNode);
    }
  }
  return out;
}

/** A tag outside the core schema on `node`, located at the tag as written. */
function tagProblem(node: YamlNode, text: string): WalkProblem | undefined {
  const tag = node.tag;
  if (tag === undefined || CORE_TAGS.has(tag)) return undefined;
  const written = tag.startsWith("tag:yaml.org,2002:") ? `!!${tag.slice("tag:yaml.org,2002:".length)}` : tag;
  const start = node.range?.[0] ?? 0;
  // The node's range starts after its tag; point at the tag as written (searched once, on failure).
  const found = text.lastIndexOf(written, start);
  return {
    offset: found >= 0 ? found : start,
    what: `tag \`${written}\` is not in the YAML 1.2 core schema (labs use plain strings, numbers, booleans, lists and mappings)`,
  };
}

/** The first non-scalar, merge or duplicate key of `map`. */
function keyProblem(map: YamlNode & { items: { key: unknown }[] }, text: string, lineOf: (offset: number) => number): WalkProblem | undefined {
  const seen = new Map<string, { offset: number; written: string }>();
  for (const pair of map.items) {
    const k = pair.key;
    if (!isScalar(k)) {
      const node = k as YamlNode | null;
      const offset = node?.range ? node.range[0] : (map.range?.[0] ?? 0);
      return { offset, what: `${isAlias(k) ? "an alias" : "a complex (non-scalar) value"} is used as a mapping key; lab keys must be plain strings` };
    }
    const written = k.range ? text.slice(k.range[0], k.range[1]).trim() : String(k.value);
    const offset = k.range?.[0] ?? 0;
    if (k.value === "<<") {
      return { offset, what: "merge key `<<` is not allowed: labs are YAML 1.2 core schema, which has no merge keys (write the keys out)" };
    }
    const identity = String(k.value);
    const prior = seen.get(identity);
    if (prior) {
      const same = prior.written === written ? "" : ` (\`${clip(prior.written)}\` and \`${clip(written)}\` are the same key once read)`;
      return { offset, what: `duplicate key \`${clip(written)}\`, first defined at line ${lineOf(prior.offset)}${same}` };
    }
    seen.set(identity, { offset, written });
  }
  return undefined;
}

function fail(offset: number, what: string): { ok: false; problem: WalkProblem } {
  return { ok: false, problem: { offset, what } };
}
