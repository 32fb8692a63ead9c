/**
 * What every Responses wire of a browser participant reads and checks alike, whichever tool its
 * calls use (the computer tool, function calls): a response's id, status, model, reasoning
 * summaries, message texts, usage and output items; the data URL a screenshot travels as; and the
 * rule that a replayed conversation pairs every call with exactly one output. Pure (no I/O).
 * Each wire reads its own calls and names its own mismatch error.
 */
import type { HumanishError } from "../errors.ts";
import { parseUsage, type RequestUsage } from "./usage.ts";

type Json = Record<string, unknown>;

/** What one response said; `C` is the wire's call. */
export interface ResponseOutput<C> {
  id: string | null;
  status: string;
  /** `incomplete_details.reason` when the status is `incomplete`. */
  incompleteReason: string | null;
  model: string | null;
  calls: C[];
  reasoning: string[];
  messages: string[];
  usage: RequestUsage | null;
  /** Output items as returned (replayed verbatim on later requests). */
  output: Json[];
  /** Problems reading the response (a call without call_id…); non-empty = malformed. */
  problems: string[];
}

/** The string `field` of every object in `v` (not an array: none). */
function texts(v: unknown, field: string): string[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((p) => (p && typeof p === "object" && typeof (p as Json)[field] === "string" ? [(p as Json)[field] as string] : []));
}

/**
 * Reads a Responses object (already JSON): the shared fields, reasoning and message items;
 * every other output item goes to `readItem`, which pushes the wire's calls (or a problem) onto
 * `out`. Never throws for a malformed object: what cannot be read is absent or null.
 */
export function readResponseOutput<C>(resp: unknown, readItem: (item: Json, out: ResponseOutput<C>) => void): ResponseOutput<C> {
  const r = (resp && typeof resp === "object" ? resp : {}) as Json;
  const output = Array.isArray(r.output) ? (r.output.filter((o) => o && typeof o === "object") as Json[]) : [];
  const incomplete = r.incomplete_details && typeof r.incomplete_details === "object" ? (r.incomplete_details as Json).reason : undefined;
  const out: ResponseOutput<C> = {
    id: typeof r.id === "string" ? r.id : null,
    status: typeof r.status === "string" ? r.status : "unknown",
    incompleteReason: typeof incomplete === "string" ? incomplete : null,
    model: typeof r.model === "string" ? r.model : null,
    calls: [],
    reasoning: [],
    messages: [],
    usage: parseUsage(r.usage),
    output,
    problems: [],
  };
  for (const item of output) {
    if (item.type === "reasoning") out.reasoning.push(...[...texts(item.summary, "text"), ...texts(item.content, "text")].filter((s) => s.trim()));
    else if (item.type === "message") {
      const t = texts(item.content, "text").join("\n").trim();
      if (t) out.messages.push(t);
    } else readItem(item, out);
  }
  return out;
}

/** A PNG as the data URL an `input_image` or a screenshot output carries. */
export function pngDataUrl(png: Uint8Array): string {
  return `data:image/png;base64,${Buffer.from(png.buffer, png.byteOffset, png.byteLength).toString("base64")}`;
}

/**
 * Checks that every item of type `call` has exactly one item of type `output` after it with its
 * `call_id`, and that every output names an earlier call.
 * @throws the error `mismatch` makes of a message naming the call id (the request is not sent).
 */
export function checkOutputPairs(items: readonly Json[], call: string, output: string, mismatch: (message: string) => HumanishError): void {
  const open = new Map<string, number>();
  for (const it of items) {
    if (it.type === call && typeof it.call_id === "string") open.set(it.call_id, 0);
    else if (it.type === output) {
      const id = typeof it.call_id === "string" ? it.call_id : "";
      const n = open.get(id);
      if (n === undefined || n > 0) throw mismatch(`${output} ${id} ${n === undefined ? `names no earlier ${call}` : "repeats an output"}`);
      open.set(id, 1);
    }
  }
  for (const [id, n] of open) if (n === 0) throw mismatch(`${call} ${id} has no ${output}`);
}
