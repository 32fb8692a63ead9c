/**
 * Project-file writes of `humanish init`, contained in the project directory (`--cwd`):
 * `humanish/labs/<id>.yaml` and the `.humanish/` line of `.gitignore`.
 *
 * Refusals (`HUMANISH_UNSAFE_PROJECT_PATH`): a lab id that is not one plain file name, any
 * directory on the way (`humanish/`, `humanish/labs/`) or the target file that is a symlink or
 * not what it should be, a `.gitignore` that is a symlink or not a regular file, and anything
 * whose real path lands outside the project's real path. Writes are atomic: a temp file in the
 * same directory, then `link` (no overwrite: fails if the file appeared meanwhile) or `rename`
 * (`--force`).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { writeUserFileSync } from "../bundle/safe-write.ts";
import { HumanishError } from "../errors.ts";

/** Code of every containment refusal. */
export const UNSAFE = "HUMANISH_UNSAFE_PROJECT_PATH";

function unsafe(
  message: string,
  next = "Pick a plain lab id (letters, digits, `_`, `.`, `-`) and a project directory without symlinked humanish/ folders.",
): HumanishError {
  return new HumanishError(UNSAFE, message, { next });
}

/** `lstat` or null when the path does not exist. */
function lstatOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/**
 * Validates the project directory and returns its real path.
 * @throws HumanishError `HUMANISH_INVALID_CWD` when it is missing or not a directory.
 */
export function projectRoot(cwd: string): string {
  try {
    if (!statSync(cwd).isDirectory()) throw new Error("not a directory");
    return realpathSync(cwd);
  } catch (err) {
    throw new HumanishError("HUMANISH_INVALID_CWD", `The project directory ${cwd} does not exist or is not a directory (${(err as Error).message}).`, {
      next: "Pass --cwd with an existing project directory.",
    });
  }
}

/** True when `child` (a real path) is `root` or inside it. */
function inside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && rel !== "..");
}

/**
 * Ensures `humanish/labs/` exists as real directories inside the project and returns the lab
 * file path for `id` (project-relative and absolute). Refuses ids that are not one plain name.
 * @throws HumanishError HUMANISH_UNSAFE_PROJECT_PATH
 */
export function labTarget(root: string, id: string, opts: { create: boolean }): { abs: string; rel: string } {
  if (id.length === 0 || id.length > 200 || id.includes("/") || id.includes("\\") || id.includes("\u0000") || id === "." || id === ".." || id.startsWith(".")) {
    throw unsafe(`The lab id ${JSON.stringify(id.slice(0, 120))} is not a plain file name inside humanish/labs/; it would escape the project.`);
  }
  let dir = root;
  for (const seg of ["humanish", "labs"]) {
    dir = join(dir, seg);
    const st = lstatOrNull(dir);
    if (st === null) {
      if (!opts.create) continue;
      mkdirSync(dir);
    } else if (st.isSymbolicLink()) {
      throw unsafe(`${relative(root, dir)} is a symlink; humanish init writes only into real directories of the project.`);
    } else if (!st.isDirectory()) {
      throw unsafe(`${relative(root, dir)} exists and is not a directory.`);
    }
  }
  const abs = join(dir, `${id}.yaml`);
  if (opts.create && !inside(root, realpathSync(dir))) throw unsafe(`${relative(root, dir)} resolves outside the project.`);
  return { abs, rel: relative(root, abs).split(sep).join("/") };
}

/**
 * Whether the lab file exists; refuses a symlink or non-regular file there (even with --force).
 * @throws HumanishError HUMANISH_UNSAFE_PROJECT_PATH
 */
export function labFileExists(abs: string, rel: string): boolean {
  const st = lstatOrNull(abs);
  if (st === null) return false;
  if (st.isSymbolicLink()) throw unsafe(`${rel} is a symlink; refusing to write through it.`, "Remove the symlink or pick another --id.");
  if (!st.isFile()) throw unsafe(`${rel} exists and is not a regular file.`, "Remove it or pick another --id.");
  return true;
}

/**
 * Atomically writes the lab file through the one writer of user-named files (temp file, then
 * link or rename; never through a symlink). Without `force` an existing file is never replaced
 * (a lab that appears between the check and the write is refused too).
 * @throws HumanishError HUMANISH_LAB_EXISTS when the file exists and `force` is false;
 *   HUMANISH_UNSAFE_PROJECT_PATH when a symlink or non-regular file is there;
 *   HUMANISH_LAB_WRITE_FAILED when the file cannot be written.
 */
export function writeLabFile(abs: string, rel: string, text: string, force: boolean): void {
  writeUserFileSync(abs, text, {
    force,
    label: "the lab file",
    flag: "--id",
    another: "--id <another-id> to write a new lab",
    display: rel,
    codes: { exists: "HUMANISH_LAB_EXISTS", unsafe: UNSAFE, failed: "HUMANISH_LAB_WRITE_FAILED" },
  });
}

/** The refusal for an existing lab file without `--force`. */
export function labExists(rel: string): HumanishError {
  return new HumanishError("HUMANISH_LAB_EXISTS", `${rel} already exists; humanish init does not overwrite a lab.`, {
    next: "Pass --force to replace it, or --id <another-id> to write a new lab.",
  });
}

/** What happened to `.gitignore`. */
export type GitignoreOutcome = "created" | "added" | "present";

const IGNORE_LINE = ".humanish/";

/** True when a `.gitignore` text already ignores the whole `.humanish/` directory. */
export function ignoresHumanish(text: string): boolean {
  return text.split(/\r?\n/).some((l) => ["/.humanish/", ".humanish/", ".humanish", "/.humanish", ".humanish/*", "/.humanish/*"].includes(l.trim()));
}

/**
 * Adds `.humanish/` to the project's `.gitignore` (created when missing). Plans first, writes
 * with {@link commitGitignore}; split so a cancelled wizard writes nothing.
 * @throws HumanishError HUMANISH_UNSAFE_PROJECT_PATH when `.gitignore` is a symlink or not a regular file.
 */
export function planGitignore(root: string): { outcome: GitignoreOutcome; abs: string; text: string } {
  const abs = join(root, ".gitignore");
  const st = lstatOrNull(abs);
  if (st === null) return { outcome: "created", abs, text: `${IGNORE_LINE}\n` };
  if (st.isSymbolicLink())
    throw unsafe(".gitignore is a symlink; refusing to write through it.", "Replace .gitignore with a regular file, then run humanish init again.");
  if (!st.isFile()) throw unsafe(".gitignore exists and is not a regular file.", "Remove it, then run humanish init again.");
  const old = readFileSync(abs, "utf8");
  if (ignoresHumanish(old)) return { outcome: "present", abs, text: old };
  return { outcome: "added", abs, text: `${old}${old.length && !old.endsWith("\n") ? "\n" : ""}${IGNORE_LINE}\n` };
}

/** Writes `text` to a fresh temp file next to `abs` (O_EXCL, mode 0644) and returns its path. */
function writeTemp(abs: string, text: string): string {
  const tmp = `${abs}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    const bytes = Buffer.from(text, "utf8");
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/** Writes a planned `.gitignore` atomically (nothing to do when the line is already present). */
export function commitGitignore(plan: { outcome: GitignoreOutcome; abs: string; text: string }): void {
  if (plan.outcome === "present") return;
  const tmp = writeTemp(plan.abs, plan.text);
  try {
    if (plan.outcome === "created") {
      try {
        linkSync(tmp, plan.abs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        // Appeared meanwhile: plan again from its contents.
        commitGitignore(planGitignore(dirname(plan.abs)));
      }
    } else {
      renameSync(tmp, plan.abs);
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // renamed into place
    }
  }
}
