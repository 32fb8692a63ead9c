/**
 * The one writer for files a user names on the command line (`runs compare --html FILE`,
 * `types --out FILE`, `export --out DIR`'s trajectories and images).
 *
 * A name the user typed may already be something else: a symlink planted by someone who can
 * write the directory (writing would follow it to any file the user can write), a FIFO (opening
 * it blocks until a reader appears, forever), a device, a directory, or yesterday's report. So:
 * - the target is inspected with `lstat` and never opened: a symlink or anything that is not a
 *   regular file is refused even with `force`;
 * - an existing regular file is replaced only with `force`;
 * - the bytes go to a fresh temp file in the same directory (`O_EXCL | O_NOFOLLOW`), are
 *   fsynced, then put in place with `link` (no `force`: fails if a file appeared meanwhile) or
 *   `rename` (`force`: replaces the directory entry itself, never a symlink's target), so a
 *   reader sees the old file or the whole new one.
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fsyncSync, linkSync, lstatSync, openSync, renameSync, type Stats, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { HumanishError } from "../errors.ts";

/** Error codes of a refused or failed write; each command keeps its own stable ones. */
export interface SafeWriteCodes {
  /** An existing regular file without `force`. Default `HUMANISH_OUTPUT_EXISTS`. */
  exists: string;
  /** A symlink, FIFO, directory, device or socket at the name. Default `HUMANISH_OUTPUT_UNSAFE`. */
  unsafe: string;
  /** The write itself failed (no directory, no permission, disk full). Default `HUMANISH_OUTPUT_WRITE_FAILED`. */
  failed: string;
}

/** Options of {@link writeUserFileSync} and {@link checkUserTargets}. */
export interface SafeWriteOptions {
  /** Replace an existing regular file (never a symlink or a non-regular file). */
  force: boolean;
  /** How the user named it, for messages: e.g. `--html report.html`. */
  label: string;
  /** The flag that names another target, for the next step: e.g. `--html`. */
  flag: string;
  /** How to name another target, for the next step (default: `<flag> another path`). */
  another?: string;
  /** The path as messages show it (default: `path` itself), e.g. project-relative. */
  display?: string;
  codes?: Partial<SafeWriteCodes>;
}

const DEFAULT_CODES: SafeWriteCodes = { exists: "HUMANISH_OUTPUT_EXISTS", unsafe: "HUMANISH_OUTPUT_UNSAFE", failed: "HUMANISH_OUTPUT_WRITE_FAILED" };

function anotherOf(o: SafeWriteOptions): string {
  return o.another ?? `${o.flag} another path`;
}

function codesOf(o: SafeWriteOptions): SafeWriteCodes {
  return { ...DEFAULT_CODES, ...o.codes };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** What a non-regular directory entry is, in words. */
function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return "a symlink (never followed)";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isDirectory()) return "a directory";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Refuse, before anything is written, every target that is not absent or (with `force`) a
 * regular file. Checking all targets first means a multi-file output is refused whole.
 * @throws HumanishError `codes.unsafe` (symlink, FIFO, directory, device, socket),
 *         `codes.exists` (a regular file without `force`), `codes.failed` (cannot inspect it)
 */
export function checkUserTargets(paths: readonly string[], o: SafeWriteOptions): void {
  const c = codesOf(o);
  for (const path of paths) {
    let st: Stats | null;
    try {
      st = lstatOrNull(path);
    } catch (e) {
      throw new HumanishError(
        c.failed,
        `cannot inspect ${o.display ?? path} (${o.label}): ${(e as NodeJS.ErrnoException).code ?? "error"}; nothing was written`,
        {
          next: `pass ${o.flag} a path in a directory you can read and write`,
          cause: e,
        },
      );
    }
    if (st === null) continue;
    if (!st.isFile()) {
      throw new HumanishError(c.unsafe, `${o.display ?? path} (${o.label}) is ${kindOf(st)}; nothing was written`, {
        next: `remove it, or pass ${anotherOf(o)}`,
      });
    }
    if (!o.force) {
      throw new HumanishError(c.exists, `${o.display ?? path} (${o.label}) already exists; nothing was written`, {
        next: `pass --force to replace it, or ${anotherOf(o)}`,
      });
    }
  }
}

/** Writes every byte to a fresh temp file beside `path` and fsyncs it; returns the temp path. */
function writeTemp(path: string, bytes: Uint8Array): string {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString("hex")}`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/**
 * Write `data` to the user-named `path` under the rules above (the parent directory must exist).
 * @throws HumanishError `codes.unsafe`, `codes.exists` (also when a file appears at `path`
 *         between the check and the write), `codes.failed`
 */
export function writeUserFileSync(path: string, data: string | Uint8Array, o: SafeWriteOptions): void {
  const c = codesOf(o);
  checkUserTargets([path], o);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let tmp: string | undefined;
  try {
    tmp = writeTemp(path, bytes);
    if (o.force) {
      // Checked again right before the rename: rename replaces whatever entry is there, so a
      // symlink or FIFO swapped in since the first check is refused rather than replaced.
      checkUserTargets([path], o);
      renameSync(tmp, path);
      tmp = undefined;
    } else {
      linkSync(tmp, path);
    }
  } catch (e) {
    if (e instanceof HumanishError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      throw new HumanishError(c.exists, `${o.display ?? path} (${o.label}) appeared while it was being written; nothing was replaced`, {
        next: `pass --force to replace it, or ${anotherOf(o)}`,
      });
    }
    throw new HumanishError(c.failed, `cannot write ${o.display ?? path} (${o.label}): ${code ?? (e as Error).message}`, {
      next: `pass ${o.flag} a path in a directory that exists and you can write`,
      cause: e,
    });
  } finally {
    if (tmp !== undefined) {
      try {
        unlinkSync(tmp);
      } catch {
        // Never created, or already gone.
      }
    }
  }
}
