/**
 * Observation encode/decode between memory (`BrowserObservation`, PNG bytes) and the wire
 * (`WireObservation`, canonical base64); every PNG passes admission on the way in.
 */
import { admitPng } from "../png/index.ts";
import { type ActionDisposition, browserControlError } from "./errors.ts";
import { type BrowserObservation, type WireObservation, wireObservationSchema } from "./schemas.ts";

const OBSERVATION_KEYS: ReadonlySet<string> = new Set(["png", "stateSignature", "url", "title", "text", "scrollY"]);

/**
 * Guest side: turn an executor's observation into its wire form. Refuses (never drops) unknown
 * keys such as `appState`, a `png` that is not a Uint8Array or fails `admitPng`, and any field
 * outside its bound. Throws `BrowserControlError("invalid_response", disposition)`; `disposition`
 * defaults to `not_dispatched` because observing dispatches no input.
 */
export function encodeObservation(obs: BrowserObservation, disposition: ActionDisposition = "not_dispatched"): WireObservation {
  if (typeof obs !== "object" || obs === null) throw browserControlError("invalid_response", disposition, "observation: executor returned a non-object");
  for (const key of Object.keys(obs))
    if (!OBSERVATION_KEYS.has(key))
      throw browserControlError("invalid_response", disposition, `observation: field ${JSON.stringify(key.slice(0, 64))} has no schema in protocol version 1`);
  if (!(obs.png instanceof Uint8Array)) throw browserControlError("invalid_response", disposition, "observation.png: must be a Uint8Array of PNG bytes");
  const admission = admitPng(obs.png);
  if (!admission.ok) throw browserControlError("invalid_response", disposition, `observation.png: ${admission.code}: ${admission.detail}`);
  const wire: Record<string, unknown> = {
    png: Buffer.from(obs.png.buffer, obs.png.byteOffset, obs.png.byteLength).toString("base64"),
    stateSignature: obs.stateSignature,
  };
  for (const k of ["url", "title", "text", "scrollY"] as const) if (obs[k] !== undefined) wire[k] = obs[k];
  const parsed = wireObservationSchema.safeParse(wire);
  if (!parsed.success)
    throw browserControlError("invalid_response", disposition, `observation: ${parsed.error.issues[0]?.path.join(".") ?? "?"} is out of bounds`);
  return parsed.data;
}

/**
 * Host side: validate a wire observation and decode it. Checks the schema, canonical base64
 * (the decoded bytes must re-encode to the identical string) and `admitPng`. Throws
 * `BrowserControlError("invalid_response", "outcome_uncertain")` on any failure.
 */
export function decodeObservation(wire: unknown): BrowserObservation {
  const parsed = wireObservationSchema.safeParse(wire);
  if (!parsed.success)
    throw browserControlError("invalid_response", "outcome_uncertain", `observation: field ${parsed.error.issues[0]?.path.join(".") ?? "?"} is invalid`);
  const w = parsed.data;
  const bytes = Buffer.from(w.png, "base64");
  if (bytes.toString("base64") !== w.png) throw browserControlError("invalid_response", "outcome_uncertain", "observation.png: base64 is not canonical");
  const admission = admitPng(bytes);
  if (!admission.ok) throw browserControlError("invalid_response", "outcome_uncertain", `observation.png: ${admission.code}: ${admission.detail}`);
  const obs: BrowserObservation = { png: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), stateSignature: w.stateSignature };
  if (w.url !== undefined) obs.url = w.url;
  if (w.title !== undefined) obs.title = w.title;
  if (w.text !== undefined) obs.text = w.text;
  if (w.scrollY !== undefined) obs.scrollY = w.scrollY;
  return obs;
}
