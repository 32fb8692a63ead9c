/**
 * Counting o200k_base tokens, the encoding of OpenAI's current models, with gpt-tokenizer's own
 * byte-pair encoder and o200k_base parameters (split pattern, special tokens).
 *
 * The encoder is built on the first count from the package's rank file
 * (`data/o200k_base.tiktoken`: one base64 token and its rank a line) rather than from the
 * package's generated module, whose 200,000-element array literal costs about 90 MiB of peak
 * memory to parse in every process that counts (each study's gateway, each analysis); reading
 * the file costs a few MiB. A token whose bytes decode as UTF-8 and encode back to the same
 * bytes is given to the encoder as a string, any other as its bytes: the rule the package's
 * generated table was made by (a test compares the two tables entry by entry).
 *
 * Special-token text (`<|endoftext|>` and the like) inside a request is counted as the ordinary
 * text it is: the service tokenises user text that way, and the package's default refuses such
 * text with an exception, which would turn a page or a terminal line that happens to show one
 * into a failed admission.
 */
import { readFileSync } from "node:fs";
import { BytePairEncodingCore } from "gpt-tokenizer/BytePairEncodingCore";
import ranksPath from "gpt-tokenizer/data/o200k_base.tiktoken" with { type: "file" };
import { O200KBase } from "gpt-tokenizer/encodingParams/o200k_base";
import { collectScratch } from "../bytes/scratch.ts";

/** Special tokens given their special id: none (each is counted as the text it is). */
const NO_SPECIAL = new Set<string>();

let encoder: BytePairEncodingCore | null = null;

/** Whether every character of `s` is below 0x80 (so the string is its own UTF-8 bytes). */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * The rank table of `text` (the `.tiktoken` format): index = rank, value = the token as a string
 * when its bytes decode as UTF-8 and encode back to the same bytes, else its bytes. Most tokens
 * are ASCII and are taken as the decoded base64 itself, with no byte buffer per token: 200,000
 * small buffers would set the process's peak memory, not the table.
 * @throws Error naming the line when a line is not `<base64> <rank>`
 */
export function parseTiktokenRanks(text: string): (string | number[])[] {
  // A decoder that strips a leading byte-order mark would give a token that no longer encodes
  // back to its bytes; the length check sends such a token to the byte table.
  const strict = new TextDecoder("utf-8", { fatal: true });
  const ranks: (string | number[])[] = [];
  let at = 0;
  let line = 0;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    line++;
    if (end > at) {
      const space = text.indexOf(" ", at);
      const rank = space > at && space < end ? Number(text.slice(space + 1, end)) : Number.NaN;
      if (!Number.isInteger(rank) || rank < 0) throw new Error(`rank file line ${line} is not "<base64> <rank>"`);
      ranks[rank] = tokenOf(atob(text.slice(at, space)), strict);
    }
    at = end + 1;
  }
  return ranks;
}

/** One token from its bytes as a binary string (one character a byte). */
function tokenOf(binary: string, strict: TextDecoder): string | number[] {
  if (isAscii(binary)) return binary;
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    const s = strict.decode(bytes);
    if (Buffer.byteLength(s, "utf8") === bytes.length) return s;
  } catch {
    // not UTF-8: the byte table below
  }
  return [...bytes];
}

/**
 * The o200k_base encoder, built on first use (about 0.3 s) and kept for the process. Building it
 * leaves tens of MiB of short-lived strings twice (the parsed table, then the encoder's own
 * maps); one collection before, between and after keeps those piles from adding up with each
 * other or with what the caller let pile up, which would otherwise set the peak memory of an
 * analysis (three collections, once a process).
 */
function o200k(): BytePairEncodingCore {
  if (encoder) return encoder;
  collectScratch();
  const ranks = parseTiktokenRanks(readFileSync(ranksPath, "latin1"));
  collectScratch();
  encoder = new BytePairEncodingCore(O200KBase(ranks));
  collectScratch();
  return encoder;
}

/** o200k_base tokens of `text` (special-token text counted as text). */
export function countTokens(text: string): number {
  return o200k().countNative(text, NO_SPECIAL);
}
