/**
 * The conservative admission estimate of one Responses request: the most it can cost, computed
 * from the request body before it is sent. Pure.
 *
 * - input: o200k_base tokens of every text the request carries (instructions, input, tool
 *   definitions, the `text` output format) counted with the real tokenizer, plus the chat
 *   format's framing per input item and per request (with a margin), then 10% more for what the
 *   service adds that we do not see;
 * - images: by their size in pixels — a PNG data URL's header gives its width and height, priced
 *   with the high-detail tile rule (fit in 2048×2048, shortest side to 768, 170 tokens per
 *   512-pixel tile plus 85) whatever `detail` says; an image whose size cannot be read (another
 *   format, a remote URL) is priced at the most any image can cost;
 * - output: `max_output_tokens` when the request sets it, else the model's output ceiling;
 * - all input priced as uncached (cache discounts only lower the real cost).
 *
 * A request that sets no `max_output_tokens` (Codex sends none) would be admitted at the model's
 * ceiling — 128k tokens, over a dollar on some models — so the gateway sets one for it:
 * {@link outputGrant} gives the most output the budget's grant affords, never above the ceiling,
 * never below {@link MIN_OUTPUT_GRANT_TOKENS} (a request that cannot afford that is refused).
 */
import { RATE_TABLE, type RateTable, rateFor } from "./rates.ts";
import { countTokens } from "./tokens.ts";

/**
 * Framing tokens allowed per input item: the chat format spends 4 (start marker, role,
 * separator, end marker); one more is kept as a margin.
 */
export const ITEM_FRAMING_TOKENS = 5;
/** Tokens allowed once per request for the markers that prime the reply (the format spends 3). */
export const REPLY_FRAMING_TOKENS = 3;
/**
 * Most tokens one image can cost at high detail: after scaling, an image is at most 768 by 2048
 * pixels, 2 × 4 tiles → 85 + 170 × 8.
 */
export const MAX_IMAGE_TOKENS = 1_445;

/**
 * The fewest output tokens the gateway grants a request it sets `max_output_tokens` for. One
 * agent turn at low reasoning effort (reasoning, a tool call or a short answer) fits in well under
 * this; a response cut at its `max_output_tokens` ends a Codex turn as failed, so a grant smaller
 * than this is worse than a clear refusal.
 */
export const MIN_OUTPUT_GRANT_TOKENS = 4_096;

/** The estimate of one request. */
export interface AdmissionEstimate {
  /** The model the request names, or null when it names none. */
  model: string | null;
  inputTokens: number;
  imageTokens: number;
  /** Output ceiling used (`max_output_tokens` or the model's ceiling). */
  outputTokens: number;
  /** Worst-case USD, or null when the model is unpriced (then no positive cap can admit it). */
  usd: number | null;
}

type Json = Record<string, unknown>;

/** Strings shorter than this are counted each time (cheaper than a cache look-up's upkeep). */
const CACHED_MIN_CHARS = 256;
/** Most characters of text whose counts are kept; the oldest are forgotten first. */
const CACHE_MAX_CHARS = 16 * 1024 * 1024;
const counted = new Map<string, number>();
let countedChars = 0;

/**
 * o200k_base tokens of `text`, exactly as the tokenizer counts them. An agent resends the same
 * instructions, tool definitions and history every turn, so long strings' counts are remembered
 * (bounded by {@link CACHE_MAX_CHARS}): a turn costs the tokenizer only its new text.
 */
export function tokensOf(text: string): number {
  if (text.length < CACHED_MIN_CHARS) return countTokens(text);
  const hit = counted.get(text);
  if (hit !== undefined) {
    // Re-inserted so the map's order is least-recently used first.
    counted.delete(text);
    counted.set(text, hit);
    return hit;
  }
  const n = countTokens(text);
  if (text.length <= CACHE_MAX_CHARS) {
    counted.set(text, n);
    countedChars += text.length;
    for (const k of counted.keys()) {
      if (countedChars <= CACHE_MAX_CHARS) break;
      counted.delete(k);
      countedChars -= k.length;
    }
  }
  return n;
}

/** High-detail tokens of a `width`×`height` image (the service's published tile rule). */
export function imageTokensFor(width: number, height: number): number {
  let w = width;
  let h = height;
  if (Math.max(w, h) > 2048) {
    const k = 2048 / Math.max(w, h);
    w *= k;
    h *= k;
  }
  if (Math.min(w, h) > 768) {
    const k = 768 / Math.min(w, h);
    w *= k;
    h *= k;
  }
  return Math.min(MAX_IMAGE_TOKENS, 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512));
}

/** Width and height from a PNG's IHDR chunk, or undefined when the bytes are not a PNG. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 24 || !sig.every((b, i) => bytes[i] === b)) return undefined;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = v.getUint32(16);
  const height = v.getUint32(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

function imageTokens(url: string): number {
  const m = /^data:image\/png;base64,/.exec(url);
  if (!m) return MAX_IMAGE_TOKENS;
  // 32 base64 characters decode to the 24 header bytes that hold the size.
  const size = pngSize(Buffer.from(url.slice(m[0].length, m[0].length + 32), "base64"));
  return size ? imageTokensFor(size.width, size.height) : MAX_IMAGE_TOKENS;
}

function collect(v: unknown, texts: string[], images: number[]): void {
  if (typeof v === "string") texts.push(v);
  else if (Array.isArray(v)) for (const x of v) collect(x, texts, images);
  else if (v && typeof v === "object") {
    const o = v as Json;
    // A computer call's output carries its screenshot as `{type: "computer_screenshot", image_url}`.
    if (o.type === "input_image" || o.type === "computer_screenshot") {
      images.push(imageTokens(typeof o.image_url === "string" ? o.image_url : ""));
      // The part's other strings (its type, `detail`) are text; the URL is priced as an image.
      for (const [k, x] of Object.entries(o)) if (k !== "image_url") collect(x, texts, images);
      return;
    }
    for (const x of Object.values(o)) collect(x, texts, images);
  }
}

/** Estimates the worst-case cost of a Responses request body (already parsed JSON). */
export function admissionEstimate(body: Json, table: RateTable = RATE_TABLE): AdmissionEstimate {
  const model = typeof body.model === "string" && body.model.length > 0 ? body.model : null;
  const texts: string[] = [];
  const images: number[] = [];
  collect(body.instructions, texts, images);
  collect(body.input, texts, images);
  if (body.tools !== undefined) texts.push(JSON.stringify(body.tools));
  // A structured-output schema (`text.format`) is given to the model as text too.
  if (body.text !== undefined) texts.push(JSON.stringify(body.text));
  const items = Array.isArray(body.input) ? body.input.length : 1;
  const rawInput = texts.reduce((a, t) => a + tokensOf(t), 0) + items * ITEM_FRAMING_TOKENS + REPLY_FRAMING_TOKENS;
  const inputTokens = Math.ceil(rawInput * 1.1);
  const imageTotal = images.reduce((a, b) => a + b, 0);
  const declared = typeof body.max_output_tokens === "number" && body.max_output_tokens > 0 ? Math.ceil(body.max_output_tokens) : undefined;
  return withOutputTokens({ model, inputTokens, imageTokens: imageTotal, outputTokens: 0, usd: null }, declared, table);
}

/**
 * The same estimate with its output ceiling set to `maxOutputTokens` (undefined: the model's
 * ceiling) and priced again — what {@link admissionEstimate} gives for the body with that
 * `max_output_tokens`, without counting its text again.
 */
export function withOutputTokens(est: AdmissionEstimate, maxOutputTokens: number | undefined, table: RateTable = RATE_TABLE): AdmissionEstimate {
  const rate = rateFor(est.model, table);
  const outputTokens = maxOutputTokens ?? rate?.maxOutputTokens ?? 0;
  // Rounded up to the micro-dollar so the estimate is never below the exact worst case.
  const usd = rate ? Math.ceil((est.inputTokens + est.imageTokens) * rate.inputPerMTok + outputTokens * rate.outputPerMTok) / 1e6 : null;
  return { ...est, outputTokens, usd };
}

/**
 * The `max_output_tokens` the gateway sets on a request that sets none: the most output tokens
 * `grantUsd` pays for after the request's input worst case, capped at the model's ceiling and
 * raised to {@link MIN_OUTPUT_GRANT_TOKENS} (or the ceiling, when lower) — admission then refuses
 * the request if even that does not fit.
 * @param grantUsd what one request may reserve (null: no cap applies).
 * @param est the body's {@link admissionEstimate}, when the caller has it already.
 * @returns the tokens to set, or undefined when the request sets its own, no cap applies, or the
 *   model is unpriced (admission decides those as they are).
 */
export function outputGrant(
  body: Json,
  grantUsd: number | null,
  table: RateTable = RATE_TABLE,
  est: AdmissionEstimate = admissionEstimate(body, table),
): number | undefined {
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) return undefined;
  if (grantUsd === null) return undefined;
  const rate = rateFor(est.model, table);
  if (!rate || rate.outputPerMTok <= 0) return undefined;
  const inputMicros = Math.ceil((est.inputTokens + est.imageTokens) * rate.inputPerMTok);
  const affordable = Math.floor((Math.floor(grantUsd * 1e6) - inputMicros) / rate.outputPerMTok);
  const floor = Math.min(MIN_OUTPUT_GRANT_TOKENS, rate.maxOutputTokens);
  return Math.max(floor, Math.min(rate.maxOutputTokens, affordable));
}
