/**
 * The Connect protocol with the JSON codec, as the `e2b` SDK's envd transport speaks it
 * (`@connectrpc/connect-web`, `useBinaryFormat: false`). Pure: no I/O.
 *
 * - Unary: `POST /<service>/<Method>`, `application/json` body in and out; an error is a non-200
 *   status with `{ code, message }` (code names such as `not_found`).
 * - Server streaming: request and response are `application/connect+json` envelopes — one flag
 *   byte, a 4-byte big-endian length, then the JSON message. The last envelope carries flag 2
 *   (end of stream) and `{}` or `{ error: { code, message } }`.
 */

/** Connect error codes this server uses, with the HTTP status a unary error answers with. */
export const CONNECT_CODES = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  failed_precondition: 412,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
} as const;

/** A Connect error code name. */
export type ConnectCode = keyof typeof CONNECT_CODES;

/** Flag byte of the end-of-stream envelope. */
export const END_STREAM_FLAG = 2;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** One envelope: `flags` (0 = message, 2 = end of stream) and the JSON of `message`. */
export function envelope(flags: number, message: unknown): Uint8Array {
  const payload = enc.encode(JSON.stringify(message));
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** The end-of-stream envelope, carrying an error when given. */
export function endStream(error?: { code: ConnectCode; message: string }): Uint8Array {
  return envelope(END_STREAM_FLAG, error ? { error } : {});
}

/**
 * Decodes the first envelope of a streaming request body (a server-streaming call sends exactly
 * one). Throws `Error` naming what is wrong when the bytes are not one well-formed envelope.
 */
export function decodeRequestEnvelope(body: Uint8Array): unknown {
  if (body.length < 5) throw new Error(`request envelope is ${body.length} bytes, shorter than its 5-byte header`);
  const length = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if (body.length < 5 + length) throw new Error(`request envelope declares ${length} bytes but carries ${body.length - 5}`);
  return JSON.parse(dec.decode(body.subarray(5, 5 + length)));
}

/** A unary Connect error response. */
export function unaryError(code: ConnectCode, message: string): Response {
  return Response.json({ code, message }, { status: CONNECT_CODES[code] });
}

/** Base64 of bytes, as protobuf JSON encodes `bytes` fields. */
export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

/** Signal numbers of envd's `Signal` enum, accepted as a JSON name or as its number. */
export function signalNumber(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (value === "SIGNAL_SIGKILL") return 9;
  if (value === "SIGNAL_SIGTERM") return 15;
  return undefined;
}

/**
 * The pid a `ProcessSelector` names (`{ pid }` or `{ tag }` in JSON). Returns `{ pid }` or `{ tag }`,
 * or undefined when neither is set.
 */
export function selectorOf(msg: unknown): { pid: number } | { tag: string } | undefined {
  const sel = (msg as { process?: { pid?: unknown; tag?: unknown } } | undefined)?.process;
  if (typeof sel?.pid === "number") return { pid: sel.pid };
  if (typeof sel?.tag === "string") return { tag: sel.tag };
  return undefined;
}
