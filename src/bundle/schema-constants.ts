/**
 * The string constants of zod schemas (every enum member, string literal and object key), so
 * redaction can tell structure from free text: a string value or key equal to one of our own
 * schema words (`docker`, `live`, `stdout`, `humanish.run-bundle.v1`, `state`) is structure and
 * is never scrubbed, even when a secret value happens to be the same word.
 */
import type { z } from "zod";

interface Def {
  type?: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  entries?: Record<string, unknown>;
  values?: unknown[];
  innerType?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  getter?: () => z.ZodType;
}

/**
 * Every string enum member, string literal and object key reachable from `schemas`. Pure;
 * cycles are safe.
 */
export function schemaConstants(...schemas: z.ZodType[]): Set<string> {
  const out = new Set<string>();
  const seen = new Set<unknown>();
  const stack: unknown[] = [...schemas];
  while (stack.length) {
    const s = stack.pop() as { _zod?: { def?: Def } } | undefined;
    if (!s || seen.has(s)) continue;
    seen.add(s);
    const def = s._zod?.def;
    if (!def) continue;
    if (def.type === "enum" && def.entries) for (const v of Object.values(def.entries)) if (typeof v === "string") out.add(v);
    if (def.type === "literal" && def.values) for (const v of def.values) if (typeof v === "string") out.add(v);
    if (def.shape) {
      for (const k of Object.keys(def.shape)) out.add(k);
      stack.push(...Object.values(def.shape));
    }
    if (def.options) stack.push(...def.options);
    if (def.items) stack.push(...def.items);
    for (const k of ["element", "innerType", "left", "right", "keyType", "valueType", "in", "out", "rest"] as const) if (def[k]) stack.push(def[k]);
    if (def.type === "lazy" && def.getter) stack.push(def.getter());
  }
  return out;
}
