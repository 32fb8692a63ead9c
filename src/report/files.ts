/**
 * Contained, no-follow reads of files inside a run directory (used by the report loader and the
 * library server). A relative path is accepted only when every segment is a plain name (no `.`,
 * `..`, empty segment, backslash, NUL or percent sign); every directory on the way and the file
 * itself must not be a symlink; the file must be a regular file with exactly one link and at
 * most `maxBytes` long. The file itself is read by the bundle's safe reader (`O_NOFOLLOW |
 * O_NONBLOCK`, same-inode and regular-file re-check on the descriptor, a read bounded by the size
 * seen), so a link, FIFO or device swapped in after the checks is still refused and never read.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { safeReadFile } from "../bundle/safe-read.ts";
import { HumanishError } from "../errors.ts";

/** Splits a bundle-relative path into safe segments, or returns null when any segment is unsafe. */
export function safeSegments(rel: string): string[] | null {
  if (rel.length === 0 || rel.length > 1024) return null;
  if (rel.startsWith("/") || rel.includes("\\") || rel.includes("\u0000") || rel.includes("%")) return null;
  const segs = rel.split("/");
  for (const s of segs) {
    if (s === "" || s === "." || s === ".." || s.length > 255) return null;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(s)) return null;
  }
  return segs;
}

/** Why a contained read failed. */
export type ContainedReadFailure = "unsafe_path" | "not_found" | "symlink" | "not_regular" | "hardlinked" | "too_large" | "changed" | "unreadable";

/** Result of {@link readContainedFile}: the bytes, or why they were refused. */
export type ContainedRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: ContainedReadFailure };

/**
 * Reads `rel` under `root` (an absolute directory the caller trusts, itself checked not to be a
 * symlink) with the rules in the module doc. Never throws for a missing or refused file.
 */
export function readContainedFile(root: string, rel: string, maxBytes: number): ContainedRead {
  const segs = safeSegments(rel);
  if (!segs) return { ok: false, reason: "unsafe_path" };
  try {
    const top = lstatSync(root);
    if (top.isSymbolicLink()) return { ok: false, reason: "symlink" };
    if (!top.isDirectory()) return { ok: false, reason: "not_regular" };
  } catch {
    return { ok: false, reason: "not_found" };
  }
  let cur = root;
  for (let i = 0; i < segs.length; i++) {
    cur = join(cur, segs[i]!);
    let st: Stats;
    try {
      st = lstatSync(cur);
    } catch {
      return { ok: false, reason: "not_found" };
    }
    if (st.isSymbolicLink()) return { ok: false, reason: "symlink" };
    const last = i === segs.length - 1;
    if (!last && !st.isDirectory()) return { ok: false, reason: "not_found" };
    if (last) {
      if (!st.isFile()) return { ok: false, reason: "not_regular" };
      if (st.nlink !== 1) return { ok: false, reason: "hardlinked" };
      if (st.size > maxBytes) return { ok: false, reason: "too_large" };
    }
  }
  const r = safeReadFile(cur, maxBytes);
  return r.ok ? { ok: true, bytes: r.bytes } : { ok: false, reason: r.reason };
}

/** Like {@link readContainedFile} but throws `HUMANISH_INVALID_RUN_BUNDLE` naming the file on refusal. */
export function readContainedOrThrow(root: string, rel: string, maxBytes: number): Uint8Array {
  const r = readContainedFile(root, rel, maxBytes);
  if (r.ok) return r.bytes;
  throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `Cannot read ${rel} in the run directory: ${r.reason.replace(/_/g, " ")}.`, {
    next: "Run `humanish verify --run <id>` to see what is wrong with this run directory.",
    details: { file: rel, reason: r.reason },
  });
}
