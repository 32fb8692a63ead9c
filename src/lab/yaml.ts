/**
 * Strict YAML loading for lab manifests: YAML 1.2 core schema only, one document, no
 * directives, no merge keys, no duplicate keys (comparing keys by their string form, so `1` and
 * `"1"` collide), no tags outside the core schema, only scalar keys. Every rejection names the
 * problem and its `line:column` (test/fixtures/cases/README.md "YAML lab manifests").
 *
 * The loaded document is kept so later validation errors can point at the line of a field.
 */
import { Composer, type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Parser, parseDocument, visit, type Node as YamlNode } from "yaml";

/** Most aliases a lab may expand (guards against alias bombs). */
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
 * Parses `text` strictly. Returns the document or the first problem (in source order within
 * each kind; lexical problems — directives, extra documents — first).
 */
export function loadStrictYaml(text: string): { ok: true; yaml: StrictYaml } | { ok: false; problem: YamlProblem } {
  const lc = new LineCounter();
  const at = (offset: number) => lc.linePos(offset);

  // 1. Lexical: directives and document count, from the CST (parsed once, composed below).
  const tokens = Array.from(new Parser(lc.addNewLine).parse(text));
  let documents = 0;
  for (const tok of tokens) {
    if (tok.type === "directive") {
      const name = tok.source.trim().split(/\s+/)[0] ?? "%";
      return fail(at(tok.offset), `YAML directive \`${tok.source.trim()}\` is not allowed: labs are YAML 1.2 core schema only (remove the ${name} line)`);
    }
    if (tok.type === "document") {
      documents++;
      if (documents === 2) {
        return fail(
          at(tok.offset),
          "a second YAML document starts here: a lab file holds exactly one document (remove everything from here on, or split it into two files)",
        );
      }
    }
  }

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
  const composed = Array.from(new Composer(options).compose(tokens, true, text.length));
  const doc = composed[0] ?? parseDocument("", options);
  if (composed.length > 1) return fail({ line: 1, col: 1 }, "more than one YAML document: a lab file holds exactly one document");
  for (const e of [...doc.errors, ...doc.warnings]) {
    if (e.linePos === undefined) e.linePos = [at(e.pos[0]), at(e.pos[1])];
  }
  const firstError = doc.errors[0];
  if (firstError) {
    const p = firstError.linePos?.[0] ?? at(firstError.pos[0]);
    return fail(p, `YAML syntax error: ${firstError.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`);
  }
  const firstWarning = doc.warnings[0];
  if (firstWarning) {
    const p = firstWarning.linePos?.[0] ?? at(firstWarning.pos[0]);
    return fail(p, `YAML problem: ${firstWarning.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")} (labs use the YAML 1.2 core schema only)`);
  }

  // 3. Structural rules: scalar keys, no merge keys, no duplicate keys, core tags only.
  let problem: YamlProblem | undefined;
  const tagProblem = (node: YamlNode): typeof visit.BREAK | undefined => {
    const tag = node.tag;
    if (tag === undefined || CORE_TAGS.has(tag)) return undefined;
    const written = tag.startsWith("tag:yaml.org,2002:") ? `!!${tag.slice("tag:yaml.org,2002:".length)}` : tag;
    const end = node.range?.[0] ?? 0;
    const found = text.lastIndexOf(written, end);
    const p = at(found >= 0 ? found : end);
    problem = {
      ...p,
      message: `${p.line}:${p.col}: tag \`${written}\` is not in the YAML 1.2 core schema (labs use plain strings, numbers, booleans, lists and mappings)`,
    };
    return visit.BREAK;
  };
  visit(doc, {
    Map(_key, map) {
      if (tagProblem(map) === visit.BREAK) return visit.BREAK;
      const seen = new Map<string, { line: number; col: number; written: string }>();
      for (const pair of map.items) {
        const k = pair.key;
        if (!isScalar(k)) {
          const node = k as YamlNode | null;
          const p = node?.range ? at(node.range[0]) : at(map.range?.[0] ?? 0);
          problem = {
            ...p,
            message: `${p.line}:${p.col}: ${isAlias(k) ? "an alias" : "a complex (non-scalar) value"} is used as a mapping key; lab keys must be plain strings`,
          };
          return visit.BREAK;
        }
        const written = k.range ? text.slice(k.range[0], k.range[1]).trim() : String(k.value);
        const p = at(k.range?.[0] ?? 0);
        if (k.value === "<<") {
          problem = {
            ...p,
            message: `${p.line}:${p.col}: merge key \`<<\` is not allowed: labs are YAML 1.2 core schema, which has no merge keys (write the keys out)`,
          };
          return visit.BREAK;
        }
        const identity = String(k.value);
        const prior = seen.get(identity);
        if (prior) {
          const same = prior.written === written ? "" : ` (\`${prior.written}\` and \`${written}\` are the same key once read)`;
          problem = { ...p, message: `${p.line}:${p.col}: duplicate key \`${written}\`, first defined at line ${prior.line}${same}` };
          return visit.BREAK;
        }
        seen.set(identity, { ...p, written });
      }
      return undefined;
    },
    Seq(_key, seq) {
      return tagProblem(seq);
    },
    Scalar(_key, scalar) {
      return tagProblem(scalar);
    },
  });
  if (problem) return { ok: false, problem };

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    return fail({ line: 1, col: 1 }, `YAML could not be expanded: ${e instanceof Error ? e.message : String(e)}`);
  }

  const nodeAt = (path: readonly PropertyKey[]): unknown => {
    if (path.length === 0) return doc.contents;
    return doc.getIn(
      path.map((p) => (typeof p === "symbol" ? String(p) : p)),
      true,
    );
  };
  const yaml: StrictYaml = {
    value,
    locate(path, key) {
      let node = nodeAt(path);
      if (isAlias(node)) node = node.resolve(doc as Document);
      if (key !== undefined && isMap(node)) {
        const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === key);
        const k = pair?.key as YamlNode | undefined;
        if (k?.range) return at(k.range[0]);
      }
      const n = node as YamlNode | undefined;
      if (n && (isMap(n) || isSeq(n) || isScalar(n)) && n.range) return at(n.range[0]);
      // Fall back to the nearest existing ancestor.
      for (let i = path.length - 1; i >= 0; i--) {
        const anc = nodeAt(path.slice(0, i)) as YamlNode | undefined;
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
  return { ok: true, yaml };
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

function fail(p: { line: number; col: number }, what: string): { ok: false; problem: YamlProblem } {
  return { ok: false, problem: { line: p.line, col: p.col, message: `${p.line}:${p.col}: ${what}` } };
}
