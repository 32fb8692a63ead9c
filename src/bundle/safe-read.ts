/**
 * The one safe reader of bundle files, used by `verify`, `runs`, the report loader and the
 * library server. A run directory is untrusted input: a FIFO in place of `status.json` would
 * block a plain read forever, a symlink to `/dev/zero` would stream without end, and a sparse
 * multi-gigabyte file would be allocated in full. So every read here:
 *  1. `lstat`s the path first and accepts only a regular file (no symlink, FIFO, socket, device)
 *     whose size is within the caller's bound — an oversized file is refused without a byte read;
 *  2. opens it with `O_NOFOLLOW | O_NONBLOCK` (a symlink swapped in after the lstat fails to open,
 *     a FIFO swapped in cannot block the open);
 *  3. `fstat`s the open descriptor and requires the same device and inode, still a regular file,
 *     still within the bound;
 *  4. reads at most `size + 1` bytes, so a file that grows after the check is refused as changed
 *     instead of being read without bound.
 * Synchronous on purpose: each read is bounded, and nothing is ever left pending on a thread
 * that a signal would have to wait for.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from "node:fs";
import { HumanishError } from "../errors.ts";

/** Why a safe read was refused. */
export type SafeReadFailure = "not_found" | "symlink" | "not_regular" | "hardlinked" | "too_large" | "changed" | "unreadable";

/** Bytes, or why they were refused (with the size seen when the refusal is about size). */
export type SafeRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: SafeReadFailure; size?: number };

/** Options of {@link safeReadFile}. */
export interface SafeReadOptions {
  /** Refuse files with more than one hard link (a link could alias a file outside the bundle). Default true. */
  singleLink?: boolean;
}

function kindOf(st: Stats): SafeReadFailure | null {
  if (st.isSymbolicLink()) return "symlink";
  if (!st.isFile()) return "not_regular";
  return null;
}

/**
 * Read the regular file at absolute `path`, at most `maxBytes` bytes (see the module doc).
 * Never throws: a refusal is `{ok: false, reason}`.
 */
export function safeReadFile(path: string, maxBytes: number, opts: SafeReadOptions = {}): SafeRead {
  const singleLink = opts.singleLink ?? true;
  let before: Stats;
  try {
    before = lstatSync(path);
  } catch (e) {
    return { ok: false, reason: (e as NodeJS.ErrnoException).code === "ENOENT" ? "not_found" : "unreadable" };
  }
  const bad = kindOf(before);
  if (bad) return { ok: false, reason: bad };
  if (singleLink && before.nlink > 1) return { ok: false, reason: "hardlinked" };
  if (before.size > maxBytes) return { ok: false, reason: "too_large", size: before.size };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === "ELOOP" ? "symlink" : code === "ENOENT" ? "not_found" : "unreadable" };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: "not_regular" };
    if (st.dev !== before.dev || st.ino !== before.ino) return { ok: false, reason: "changed" };
    if (singleLink && st.nlink > 1) return { ok: false, reason: "hardlinked" };
    if (st.size > maxBytes) return { ok: false, reason: "too_large", size: st.size };
    // One byte more than the size seen: finding it means the file grew after the check.
    const buf = new Uint8Array(st.size + 1);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n <= 0) break;
      off += n;
    }
    if (off > st.size) return { ok: false, reason: "changed" };
    return { ok: true, bytes: buf.subarray(0, off) };
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    closeSync(fd);
  }
}

/** Human words for a refusal, e.g. `a FIFO or other special file`. */
export function describeSafeReadFailure(r: { reason: SafeReadFailure; size?: number }, maxBytes?: number): string {
  switch (r.reason) {
    case "not_found":
      return "missing";
    case "symlink":
      return "a symlink (bundle files are never links)";
    case "not_regular":
      return "not a regular file (FIFO, socket, device or directory)";
    case "hardlinked":
      return "hard-linked (more than one link)";
    case "too_large":
      return `${r.size ?? "?"} bytes, over the ${maxBytes ?? "?"}-byte bound`;
    case "changed":
      return "changed while it was being read";
    case "unreadable":
      return "unreadable";
  }
}

/**
 * Like {@link safeReadFile} but throws. `label` names the file in the message (a bundle-relative
 * path such as `.humanish/runs/<id>/run.json`, never an absolute host path).
 * @throws HumanishError HUMANISH_RUN_NOT_FOUND when the file is missing; HUMANISH_UNSAFE_BUNDLE_FILE
 *   for a link, special file, oversized or changing file
 */
export function safeReadOrThrow(path: string, label: string, maxBytes: number, opts: SafeReadOptions = {}): Uint8Array {
  const r = safeReadFile(path, maxBytes, opts);
  if (r.ok) return r.bytes;
  if (r.reason === "not_found") {
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `${label} does not exist`, { next: "list runs with: humanish runs" });
  }
  throw new HumanishError("HUMANISH_UNSAFE_BUNDLE_FILE", `${label} is refused: ${describeSafeReadFailure(r, maxBytes)}`, {
    next: `remove or replace ${label}; bundle files are plain regular files written by humanish`,
    details: { file: label, reason: r.reason },
  });
}
