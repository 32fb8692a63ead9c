/**
 * Files the verify core sees as facts instead of bytes — pure. A bundle's screenshots are most
 * of its bytes (a 16-seat, 100-turn study holds 1,600 of them), and every check of a binary PNG
 * is a function of its bytes that can be computed once, while the file is in hand: its size, its
 * SHA-256, its admission verdict and its content-scan shapes. The disk walk computes those here
 * and drops the bytes, so verify holds one screenshot at a time instead of the whole bundle;
 * the checks read the same facts they would have computed from the bytes.
 *
 * Only a binary `.png` (not valid text) is digested: a text file is parsed, rescanned and
 * searched for embedded PNGs by several checks, so it stays whole.
 */
import { admitPngBytes, type PngAdmission } from "../png.ts";
import type { DigestedFile, VerifyContext } from "./context.ts";
import { decodeText, digestOf, scanContent } from "./scan.ts";

/** Whether the file at bundle path `rel` is one the walk digests (a `.png` by name). */
export function digestsByName(rel: string): boolean {
  return rel.toLowerCase().endsWith(".png");
}

/**
 * The facts of `bytes` at `rel` when it is a binary PNG-named file, else null (keep the bytes).
 * `admitted` remembers verdicts by SHA-256 within one walk (admission is a function of the
 * bytes, and a report may repeat a frame), as the in-memory core does within one call.
 * Never throws: admission failures are facts too.
 */
export async function digestFile(rel: string, bytes: Uint8Array, admitted?: Map<string, PngAdmission>): Promise<DigestedFile | null> {
  if (!digestsByName(rel) || decodeText(bytes) !== null) return null;
  const sha256 = digestOf(bytes);
  let admission = admitted?.get(sha256);
  if (!admission) {
    admission = await admitPngBytes(bytes);
    admitted?.set(sha256, admission);
  }
  return { size: bytes.byteLength, sha256, admission, shapes: scanContent(rel, bytes) };
}

/** Size (bytes) and SHA-256 of a file the walk read, held or digested; null when it was not read. */
export function factsOf(ctx: Pick<VerifyContext, "files" | "digested">, rel: string): { size: number; sha256: string } | null {
  const bytes = ctx.files.get(rel);
  if (bytes) return { size: bytes.byteLength, sha256: digestOf(bytes) };
  const d = ctx.digested.get(rel);
  return d ? { size: d.size, sha256: d.sha256 } : null;
}

/** Whether the walk read `rel` (held or digested). */
export function wasRead(ctx: Pick<VerifyContext, "files" | "digested">, rel: string): boolean {
  return ctx.files.has(rel) || ctx.digested.has(rel);
}

/** Every path the walk read, held files first, each in the walk's order. */
export function readPaths(ctx: Pick<VerifyContext, "files" | "digested">): string[] {
  return [...ctx.files.keys(), ...ctx.digested.keys()];
}
