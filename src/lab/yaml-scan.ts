/**
 * The lexical pass of lab YAML: lexes and parses `text` into the library's concrete syntax
 * tokens, one lexeme at a time, and stops at the first lexeme that breaks a lexical rule — a
 * directive, a second document, or a collection nested deeper than {@link MAX_LAB_DEPTH}.
 *
 * Stopping at the depth bound is what keeps loading linear: the library's composer and every
 * later walk recurse per nesting level, so a hostile `[[[[…` must be refused here, after at most
 * `MAX_LAB_DEPTH` levels have been opened, before anything recursive sees it. The parser keeps
 * its open tokens on `parser.stack`; the collections among them are the nesting depth.
 */
import { type CST, Lexer, type LineCounter, Parser } from "yaml";

/** Deepest nesting of lists and mappings a lab may use (the top-level mapping is depth 1). */
export const MAX_LAB_DEPTH = 64;

/**
 * Most values (scalars, aliases and collections, keys included) a lab may hold. A lab is a
 * short document written by a person; the bound lets a megabyte of tiny values be refused
 * after a fraction of it is parsed instead of after all of it.
 */
export const MAX_LAB_VALUES = 10_000;

/** Lexemes that start one value: the plain-scalar marker, quoted and block scalars, aliases, collections. */
function startsValue(lexeme: string): boolean {
  if (lexeme === "\u001f" || lexeme === "[" || lexeme === "{" || lexeme === "-") return true;
  const c = lexeme[0];
  return c === '"' || c === "'" || c === "|" || c === ">" || c === "*";
}

/** A lexical rejection: where (0-based offset into the text) and what. */
export interface ScanProblem {
  offset: number;
  what: string;
}

/** The concrete syntax tokens of a text that passed the lexical rules, or the first problem. */
export type ScanResult = { ok: true; tokens: CST.Token[] } | { ok: false; problem: ScanProblem };

const COLLECTIONS = new Set(["block-map", "block-seq", "flow-collection"]);

/**
 * Lexes and parses `text`, recording line starts in `lc`.
 * Time and memory are linear in `text.length`: each lexeme is handled once, and the depth count
 * looks at a stack that is never allowed to hold more than `MAX_LAB_DEPTH + 1` collections.
 */
export function scanLabYaml(text: string, lc: LineCounter): ScanResult {
  const parser = new Parser(lc.addNewLine);
  lc.addNewLine(0);
  const tokens: CST.Token[] = [];
  let documents = 0;
  let lastStackLength = 0;
  let values = 0;
  const take = (tok: CST.Token): ScanProblem | undefined => {
    tokens.push(tok);
    if (tok.type === "directive") {
      const line = tok.source.trim();
      const name = line.split(/\s+/)[0] ?? "%";
      return { offset: tok.offset, what: `YAML directive \`${line}\` is not allowed: labs are YAML 1.2 core schema only (remove the ${name} line)` };
    }
    if (tok.type === "document" && ++documents === 2) {
      return {
        offset: tok.offset,
        what: "a second YAML document starts here: a lab file holds exactly one document (remove everything from here on, or split it into two files)",
      };
    }
    return undefined;
  };
  for (const lexeme of new Lexer().lex(text)) {
    if (startsValue(lexeme) && ++values > MAX_LAB_VALUES) {
      return {
        ok: false,
        problem: {
          offset: parser.offset,
          what: `more than ${MAX_LAB_VALUES} values (keys, scalars, lists and mappings) by here; a lab may hold at most ${MAX_LAB_VALUES}`,
        },
      };
    }
    for (const tok of parser.next(lexeme)) {
      const problem = take(tok);
      if (problem) return { ok: false, problem };
    }
    // Only a push can deepen the nesting, so the stack is re-counted only when it grew.
    if (parser.stack.length > lastStackLength) {
      const deep = tooDeep(parser.stack);
      if (deep) return { ok: false, problem: deep };
    }
    lastStackLength = parser.stack.length;
  }
  for (const tok of parser.end()) {
    const problem = take(tok);
    if (problem) return { ok: false, problem };
  }
  return { ok: true, tokens };
}

/** The collection that opens nesting level `MAX_LAB_DEPTH + 1` on `stack`, as a problem. */
function tooDeep(stack: readonly CST.Token[]): ScanProblem | undefined {
  let depth = 0;
  for (const tok of stack) {
    if (!COLLECTIONS.has(tok.type)) continue;
    depth++;
    if (depth > MAX_LAB_DEPTH) {
      return {
        offset: tok.offset,
        what: `a list or mapping nested ${depth} deep starts here; labs nest at most ${MAX_LAB_DEPTH} levels (flatten this value)`,
      };
    }
  }
  return undefined;
}
