/**
 * The disk walk that feeds the verify core: list a run directory (lstat only, never following
 * a link, bounded in entries and depth) and read every regular file through the safe reader
 * (bounded per file and in total). Everything it cannot or will not read becomes a containment
 * problem or an unread path; it never judges content.
 *
 * Memory: a binary PNG is digested as soon as it is read (size, SHA-256, admission verdict and
 * content-scan shapes, by the core's own pure functions in ./digest.ts) and its bytes let go, so
 * the walk holds one screenshot at a time plus the bundle's text files, however many
 * screenshots the bundle has.
 */
import { readdirSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { scratchWindow } from "../../bytes/scratch.ts";
import type { PngAdmission } from "../png.ts";
import { describeSafeReadFailure, safeReadFile } from "../safe-read.ts";
import { MAX_FINDINGS } from "./checks-files.ts";
import type { BundleFile, DigestedBundleFile, UnreadPath } from "./core.ts";
import { digestFile } from "./digest.ts";

/** Bounds (bytes / counts) so a hostile directory cannot exhaust memory. */
export const VERIFY_LIMITS = {
  maxFiles: 20_000,
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalBytes: 1024 * 1024 * 1024,
  maxFindings: MAX_FINDINGS,
  maxDepth: 16,
} as const;

/** Path segments that must never appear in a bundle (browser profiles, VCS metadata). */
const RISKY_SEGMENTS = new Set([".git", "Cookies", "Login Data", "Local Storage", "Preferences", "Secure Preferences", "profiles"]);

/** Decoded bytes (scratch of the admission decoder) let pile up before a collection is asked for. */
const DECODE_WINDOW_BYTES = 96 * 1024 * 1024;

/**
 * A scratch window over the admission decoder: every decode of a w×h frame leaves about 8·w·h
 * bytes of buffers behind (the inflated rows and the RGBA bitmap, ~8 MiB for 1280×800), so
 * `add(pixels)` counts 8 bytes a pixel into a {@link scratchWindow}.
 */
export function decodeGarbageWindow(windowBytes = DECODE_WINDOW_BYTES): { add: (pixels: number) => void } {
  const w = scratchWindow(windowBytes);
  return { add: (pixels) => w.add(pixels * 8) };
}

/** What the walk hands to `verifyFiles`. */
export interface WalkedBundle {
  files: BundleFile[];
  /** Binary PNGs, read once and kept as their facts. */
  digested: DigestedBundleFile[];
  unread: UnreadPath[];
  containment: string[];
}

/** Walk and read `runDir` (an absolute real directory, checked by the caller). */
export async function readBundleDir(runDir: string): Promise<WalkedBundle> {
  const files: BundleFile[] = [];
  const digested: DigestedBundleFile[] = [];
  const admitted = new Map<string, PngAdmission>();
  const decodeWindow = decodeGarbageWindow();
  const unread: UnreadPath[] = [];
  const containment: string[] = [];
  let count = 0;
  let total = 0;
  let truncated = false;
  let overTotal = false;
  const visit = async (relDir: string, depth: number): Promise<void> => {
    if (depth > VERIFY_LIMITS.maxDepth) {
      truncated = true;
      return;
    }
    let names: string[];
    try {
      names = readdirSync(relDir ? join(runDir, relDir) : runDir).sort();
    } catch (e) {
      containment.push(`${relDir || "run directory"} could not be listed: ${(e as NodeJS.ErrnoException).code ?? "error"}`);
      return;
    }
    for (const name of names) {
      if (++count > VERIFY_LIMITS.maxFiles) {
        truncated = true;
        return;
      }
      const rel = relDir ? `${relDir}/${name}` : name;
      if (rel.split("/").some((s) => RISKY_SEGMENTS.has(s))) containment.push(`${rel}: risky path segment`);
      const st = await lstat(join(runDir, rel)).catch(() => null);
      if (!st) {
        containment.push(`${rel}: vanished while being listed`);
        continue;
      }
      if (st.isDirectory()) {
        unread.push({ path: rel, dir: true });
        await visit(rel, depth + 1);
        continue;
      }
      if (st.isSymbolicLink()) {
        containment.push(`${rel}: symlink`);
        unread.push({ path: rel, dir: false });
        continue;
      }
      if (!st.isFile()) {
        containment.push(`${rel}: not a regular file`);
        unread.push({ path: rel, dir: false });
        continue;
      }
      if (st.nlink > 1) containment.push(`${rel}: hard-linked (${st.nlink} links)`);
      if (st.size > VERIFY_LIMITS.maxFileBytes) {
        containment.push(`${rel}: ${st.size} bytes exceeds ${VERIFY_LIMITS.maxFileBytes}`);
        unread.push({ path: rel, dir: false });
        continue;
      }
      if (overTotal || total + st.size > VERIFY_LIMITS.maxTotalBytes) {
        if (!overTotal) containment.push(`run directory exceeds ${VERIFY_LIMITS.maxTotalBytes} bytes`);
        overTotal = true;
        unread.push({ path: rel, dir: false });
        continue;
      }
      // Links were reported above; the safe reader re-checks kind and size on the open descriptor.
      const r = safeReadFile(join(runDir, rel), VERIFY_LIMITS.maxFileBytes, { singleLink: false });
      if (!r.ok) {
        containment.push(`${rel}: ${describeSafeReadFailure(r, VERIFY_LIMITS.maxFileBytes)}`);
        unread.push({ path: rel, dir: false });
        continue;
      }
      total += r.bytes.byteLength;
      const facts = await digestFile(rel, r.bytes, admitted);
      if (facts) {
        digested.push({ path: rel, ...facts });
        decodeWindow.add(facts.admission.ok ? facts.admission.width * facts.admission.height : 0);
      } else files.push({ path: rel, bytes: r.bytes });
    }
  };
  await visit("", 0);
  if (truncated) containment.push(`directory exceeds ${VERIFY_LIMITS.maxFiles} entries or depth ${VERIFY_LIMITS.maxDepth}`);
  return { files, digested, unread, containment };
}
