/**
 * Turns validation problems into one author-facing message: `<source>:<line>:<col>: <field
 * path> <what is wrong>`, e.g. `labs/x.yaml:12:14: execution.runtime.version: expected a
 * string, got the number 1.10 (YAML reads it as 1.1); quote it: "1.10"`.
 */
import type { z } from "zod";
import { clipKey, FOREIGN_MARK, UNKNOWN_MARK } from "./strict.ts";
import type { StrictYaml } from "./yaml.ts";

/** A validation problem at a field path; `key` names an offending key of the map at `path`. */
export interface Problem {
  path: readonly PropertyKey[];
  key?: string;
  /** Text after the field path. */
  message: string;
  /** Unknown-key problems sort first (a typo often causes a "required" problem elsewhere). */
  unknownKey?: boolean;
}

/** `actors[0].tasks[1].check.run` from `["actors", 0, "tasks", 1, "check", "run"]`. */
export function formatPath(path: readonly PropertyKey[], key?: string): string {
  let out = "";
  for (const seg of key === undefined ? path : [...path, key]) {
    const name = clipKey(String(seg));
    if (typeof seg === "number") out += `[${seg}]`;
    else if (!/^[A-Za-z_<][A-Za-z0-9_<-]*$/.test(name)) out += `[${JSON.stringify(name)}]`;
    else out += out === "" ? name : `.${name}`;
  }
  return out === "" ? "(top level)" : out;
}

/** A short description of a YAML value, using its source text when it is a scalar. */
export function describeValue(value: unknown, written?: string): string {
  if (value === null) return "an empty value (null)";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)}`;
    case "number":
      return written !== undefined && written !== String(value) ? `the number ${written} (YAML reads it as ${value})` : `the number ${value}`;
    case "boolean":
      return `the boolean ${value}`;
    case "object":
      return "a mapping";
    default:
      return typeof value;
  }
}

const EXPECTED_WORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  array: "a list",
  object: "a mapping",
};

/** Converts one zod issue (path relative to `base`) into a {@link Problem}. */
export function problemFromZod(issue: z.core.$ZodIssue, yaml: StrictYaml, base: readonly PropertyKey[] = []): Problem {
  const path = [...base, ...issue.path];
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "unrecognized_keys": {
      if (issue.message.startsWith(FOREIGN_MARK)) {
        const [key, reason] = issue.message.slice(FOREIGN_MARK.length).split("\u0000") as [string, string];
        return { path, key, message: `${reason}; remove it`, unknownKey: true };
      }
      if (issue.message.startsWith(UNKNOWN_MARK)) {
        const [key, text] = issue.message.slice(UNKNOWN_MARK.length).split("\u0000") as [string, string];
        return { path, key, message: text, unknownKey: true };
      }
      return { path, key: issue.keys[0], message: "is not a known key", unknownKey: true };
    }
    case "invalid_type": {
      const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
      if (input === undefined) return { path, message: `is required (${expected})` };
      const written = yaml.sourceOf(path);
      let hint = "";
      if (issue.expected === "string" && (typeof input === "number" || typeof input === "boolean" || input === null)) {
        hint = `; quote it: "${written ?? String(input)}"`;
      } else if ((issue.expected === "boolean" || issue.expected === "number") && typeof input === "string") {
        const quoted = written !== undefined && /^["']/.test(written);
        if (quoted) hint = "; write it without quotes (no value is converted for you)";
        else if (issue.expected === "boolean") hint = "; YAML 1.2 has only true and false as booleans";
      }
      return { path, message: `expected ${expected}, got ${describeValue(input, written)}${hint}` };
    }
    case "invalid_value": {
      if (!isDefaultMessage(issue.message)) return { path, message: `${issue.message} (got ${describeValue(input, yaml.sourceOf(path))})` };
      const values = issue.values.map((v) => JSON.stringify(v)).join(", ");
      return { path, message: `must be ${issue.values.length === 1 ? values : `one of ${values}`} (got ${describeValue(input, yaml.sourceOf(path))})` };
    }
    case "invalid_union": {
      if (!isDefaultMessage(issue.message)) return { path, message: issue.message };
      return { path, message: `must be a non-empty string or a list of non-empty strings (got ${describeValue(input, yaml.sourceOf(path))})` };
    }
    case "too_small":
    case "too_big": {
      if (!isDefaultMessage(issue.message)) return { path, message: issue.message };
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const word = issue.code === "too_small" ? (issue.inclusive ? "at least" : "more than") : issue.inclusive ? "at most" : "less than";
      const unit = issue.origin === "array" ? " items" : issue.origin === "string" ? " characters" : "";
      return { path, message: `must be ${word} ${String(bound)}${unit} (got ${describeValue(input, yaml.sourceOf(path))})` };
    }
    case "not_multiple_of":
      return { path, message: `must be a multiple of ${String(issue.divisor)}` };
    case "invalid_format":
      return { path, message: isDefaultMessage(issue.message) ? `has the wrong format (${issue.format})` : issue.message };
    default:
      return { path, message: issue.message };
  }
}

/** zod's built-in messages start with these words; ours never do. */
function isDefaultMessage(m: string): boolean {
  return /^(Invalid|Too (small|big)|Expected|Unrecognized)\b/.test(m);
}

/** The message of the first problem (unknown keys first, then source order) with its location. */
export function renderFirstProblem(problems: readonly Problem[], yaml: StrictYaml, source: string): string {
  const located = problems.map((p, i) => ({ p, i, at: yaml.locate(p.path, p.key) }));
  located.sort((a, b) => {
    if (!!a.p.unknownKey !== !!b.p.unknownKey) return a.p.unknownKey ? -1 : 1;
    const la = a.at ? a.at.line * 1e6 + a.at.col : Infinity;
    const lb = b.at ? b.at.line * 1e6 + b.at.col : Infinity;
    return la - lb || a.i - b.i;
  });
  const first = located[0]!;
  const where = first.at ? `${source}:${first.at.line}:${first.at.col}` : source;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
  return `${where}: ${formatPath(first.p.path, first.p.key)} ${first.p.message}${more}`;
}
