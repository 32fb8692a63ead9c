/**
 * Building blocks for the strict lab schemas: objects that reject unknown keys with the
 * nearest known key ("did you mean …"), and that name keys which exist on the OTHER route as
 * fields that cannot act here (ARCHITECTURE.md invariant 6: a field that cannot act is rejected).
 *
 * The message produced here is only the tail ("unknown key `stesp` (did you mean `steps`?)");
 * `issues.ts` prefixes the field path and the YAML line.
 */
import { z } from "zod";
import { nearest } from "../text/nearest.ts";
import { clip } from "../text/tail.ts";

/**
 * Keys that are known somewhere in humanish but cannot act in this object on this route,
 * mapped to the reason shown to the author (e.g. `appUrl: "only acts on subject.source app-url"`).
 */
export type ForeignKeys = Readonly<Record<string, string>>;

/** Prefix used to smuggle "this key is from another route" through zod's message. */
export const FOREIGN_MARK = "\u0000foreign:";

/**
 * A `z.strictObject(shape)` whose unknown-key issue names each offending key with the nearest
 * known key, or — when the key is listed in `foreign` — says it cannot act on this route.
 */
export function strictObject<S extends z.ZodRawShape>(shape: S, foreign: ForeignKeys = {}) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code !== "unrecognized_keys") return undefined;
      const keys = (iss as { keys?: string[] }).keys ?? [];
      const first = keys.find((k) => k in foreign);
      if (first !== undefined) return `${FOREIGN_MARK}${first}\u0000${foreign[first]}`;
      // A hostile mapping may hold thousands of unknown keys: name a few, count the rest.
      const others = keys.slice(1, 1 + MAX_KEYS_NAMED).map((k) => `\`${clipKey(k)}\``);
      if (keys.length > 1 + MAX_KEYS_NAMED) others.push(`and ${keys.length - 1 - MAX_KEYS_NAMED} more`);
      const rest = others.length > 0 ? ` (also unknown here: ${others.join(", ")})` : "";
      return `${UNKNOWN_MARK}${keys[0] ?? ""}\u0000${unknownKeyText(keys[0] ?? "", known)}${rest}`;
    },
  });
}

/** How many further unknown keys a message names. */
const MAX_KEYS_NAMED = 5;

/** A key as shown in a message: at most 80 characters. */
export function clipKey(key: string): string {
  return clip(key, 80);
}

/** Prefix used to carry the offending key of an unknown-key issue through zod's message. */
export const UNKNOWN_MARK = "\u0000unknown:";

/** "is not a known key (did you mean `x`? known keys: a, b, c)". */
export function unknownKeyText(key: string, known: readonly string[]): string {
  const hint = nearest(key, known);
  const list = `known keys: ${known.join(", ")}`;
  return hint ? `is not a known key (did you mean \`${hint}\`? ${list})` : `is not a known key (${list})`;
}

/** A non-blank string (leading/trailing whitespace kept as written). */
export function nonBlank(what = "a non-empty string") {
  return z.string().refine((s) => s.trim().length > 0, { message: `must be ${what}` });
}
