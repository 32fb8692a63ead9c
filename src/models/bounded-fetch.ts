/**
 * A `fetch` for the `openai` SDK that never holds more than a byte limit of a response body: it
 * reads the body itself, counting, and stops (cancelling the stream, so the connection closes)
 * once the count passes the limit — a provider that answers with hundreds of megabytes costs
 * at most the limit in memory. A declared `content-length` over the limit is refused before any
 * of the body is read. The SDK stays the client: it gets an ordinary `Response` over the bytes.
 */

/** Thrown (through the SDK, which wraps it) when a body passes its limit. Units: bytes. */
export class ResponseTooLargeError extends Error {
  constructor(
    readonly limitBytes: number,
    readonly seenBytes: number,
  ) {
    super(`the response body passed ${limitBytes} bytes (${seenBytes} read) and was not read further`);
    this.name = "ResponseTooLargeError";
  }
}

/** What the bounded fetch saw of the last response: its body text (when whole) and whether it was cut. */
export interface BoundedFetchState {
  /** The last successful (2xx) body, decoded; null when none was read whole. */
  lastOkBody: string | null;
  /** Set when a body passed the limit. */
  tooLarge: ResponseTooLargeError | null;
}

async function readBounded(res: Response, limitBytes: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(limitBytes, 0);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > limitBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(limitBytes, seen);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(seen);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * A fetch whose response bodies are read whole, up to `limitBytes` (bytes), into `state`.
 * @throws ResponseTooLargeError (from the returned fetch) when a body passes the limit.
 */
export function boundedFetch(limitBytes: number, state: BoundedFetchState): typeof globalThis.fetch {
  return Object.assign(
    async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      const res = await fetch(input, init);
      let bytes: Uint8Array;
      try {
        bytes = await readBounded(res, limitBytes);
      } catch (e) {
        if (e instanceof ResponseTooLargeError) state.tooLarge = e;
        throw e;
      }
      if (res.ok) state.lastOkBody = new TextDecoder().decode(bytes);
      const headers = new Headers(res.headers);
      // The body is now plain bytes: its transfer encoding and length are no longer the server's.
      headers.delete("content-encoding");
      headers.delete("content-length");
      return new Response(bytes, { status: res.status, statusText: res.statusText, headers });
    },
    { preconnect: fetch.preconnect },
  );
}
