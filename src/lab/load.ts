/**
 * Lab resolution and listing (the "load" step of a run in ARCHITECTURE.md).
 *
 * An argument that looks like a path (ends `.yaml`/`.yml`, contains `/` or `\`, or starts with
 * `.`) is read from that path, resolved against the project directory. Otherwise it is a lab id,
 * searched in this order, first hit wins:
 *   1. `humanish/labs/<id>.yaml`, `humanish/labs/<id>.yml`        (origin `committed`)
 *   2. `.humanish/labs/<id>.yaml`, `.yml`                          (origin `ignored`)
 *   3. `.humanish/local/labs/<id>.yaml`, `.yml`                    (origin `ignored`)
 *   4. the labs embedded in the binary; `default` is the jq lab    (origin `embedded`)
 * Project lab files must stay inside the project: a symlink resolving outside it, or a file with
 * more than one hard link, is refused.
 */
import { createHash } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { basename, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errorMessage, HumanishError } from "../errors.ts";
import { EMBEDDED_ALIASES, EMBEDDED_LABS, findEmbeddedLab } from "./embedded.ts";
import { MAX_LAB_BYTES, parseLab } from "./parse.ts";
import { type LabBackend, selectLabBackend } from "./routing.ts";
import { LAB_ID_PATTERN, type LabConfig, type LabWarning } from "./schema.ts";

/** Project directories searched for lab ids, in order, with their origin. */
export const LAB_SEARCH_DIRS: readonly { dir: string; origin: "committed" | "ignored" }[] = [
  { dir: "humanish/labs", origin: "committed" },
  { dir: ".humanish/labs", origin: "ignored" },
  { dir: ".humanish/local/labs", origin: "ignored" },
];

/** Where a lab came from. */
export type LabOrigin = "committed" | "ignored" | "explicit" | "embedded";

/** A resolved, validated lab. */
export interface LoadedLab {
  config: LabConfig;
  warnings: LabWarning[];
  /** Path relative to the project when inside it (else absolute), or `embedded:<id>`. */
  ref: string;
  /** Absolute path of the file read; absent for embedded labs. */
  path?: string;
  origin: LabOrigin;
  /** The exact text parsed. */
  text: string;
  /** SHA-256 (hex) of the UTF-8 bytes of `text`. */
  sha256: string;
}

/** One row of `humanish lab list`. */
export interface LabListEntry {
  /** The id the lab resolves by (file name without extension, or the embedded id). */
  id: string;
  title?: string;
  description?: string;
  /** Route of a lab that parses; absent when it does not. */
  route?: LabBackend;
  /** `project` (a file under the project) or `embedded` (compiled into the binary). */
  source: "project" | "embedded";
  origin: LabOrigin;
  /** Same form as {@link LoadedLab.ref}. */
  ref: string;
  /** Aliases that resolve to this lab (embedded `default`). */
  aliases?: string[];
  /** Set when an earlier search location holds a lab with the same id (that one wins). */
  shadowedBy?: string;
  /** The parse or read error, when the lab is not valid. */
  error?: { code: string; message: string };
}

/** True when `ref` names a file rather than a lab id. */
export function looksLikeLabPath(ref: string): boolean {
  return /\.ya?ml$/i.test(ref) || ref.includes("/") || ref.includes("\\") || ref.startsWith(".");
}

/** The project paths searched for lab id `id`, in order (absolute). */
export function labSearchPaths(id: string, cwd: string): string[] {
  return LAB_SEARCH_DIRS.flatMap(({ dir }) => [".yaml", ".yml"].map((ext) => join(cwd, dir, id + ext)));
}

/**
 * Resolves and validates a lab.
 * @param ref a lab id (`default`, `jq-first-contact`) or a path to a `.yaml`/`.yml` file.
 * @param cwd the project directory (absolute or relative to the process cwd).
 * @throws HumanishError `HUMANISH_LAB_NOT_FOUND` (message lists every place looked; next:
 *   `humanish lab list`) or `HUMANISH_LAB_INVALID` (parse/validation failure, unreadable file,
 *   containment escape; the message names the field path and line).
 */
export async function loadLab(ref: string, cwd: string): Promise<LoadedLab> {
  const root = resolve(cwd);
  if (typeof ref !== "string" || ref.trim() === "") {
    throw new HumanishError("HUMANISH_LAB_NOT_FOUND", "no lab given: pass a lab id or a path to a .yaml file", { next: "humanish lab list" });
  }

  if (looksLikeLabPath(ref)) {
    const abs = isAbsolute(ref) ? ref : resolve(root, ref);
    const text = await readLabFile(abs, displayPath(abs, root), null);
    if (text === undefined) {
      throw new HumanishError("HUMANISH_LAB_NOT_FOUND", `no lab file at ${displayPath(abs, root)}`, {
        next: "humanish lab list",
        details: { looked: [displayPath(abs, root)] },
      });
    }
    return finish(text, displayPath(abs, root), abs, "explicit", undefined);
  }

  if (!LAB_ID_PATTERN.test(ref)) {
    throw new HumanishError(
      "HUMANISH_LAB_NOT_FOUND",
      `"${ref}" is neither a lab id (letters, digits, _ . - starting alphanumeric) nor a path to a .yaml file`,
      { next: "humanish lab list" },
    );
  }

  for (const { dir, origin } of LAB_SEARCH_DIRS) {
    for (const ext of [".yaml", ".yml"]) {
      const abs = join(root, dir, ref + ext);
      const text = await readLabFile(abs, displayPath(abs, root), root);
      if (text !== undefined) return finish(text, displayPath(abs, root), abs, origin, ref);
    }
  }

  const embedded = findEmbeddedLab(ref);
  if (embedded) return finish(embedded.text, `embedded:${embedded.id}`, undefined, "embedded", embedded.id);

  const looked = labSearchPaths(ref, root).map((p) => displayPath(p, root));
  const ids = [...EMBEDDED_LABS.map((l) => l.id), ...Object.keys(EMBEDDED_ALIASES)].sort();
  throw new HumanishError("HUMANISH_LAB_NOT_FOUND", `no lab "${ref}": looked in ${looked.join(", ")} and the embedded labs (${ids.join(", ")})`, {
    next: "humanish lab list",
    details: { looked, embedded: ids },
  });
}

function finish(text: string, ref: string, path: string | undefined, origin: LabOrigin, expectedId: string | undefined): LoadedLab {
  const r = parseLab(text, { source: ref });
  if (!r.ok) {
    throw new HumanishError(r.error.code, r.error.message, {
      next: `fix the field named above, then check it with: humanish lab inspect ${path ? ref : ref.replace(/^embedded:/, "")}`,
      details: { ref },
    });
  }
  const warnings = [...r.warnings];
  if (expectedId !== undefined && r.config.id !== expectedId) {
    warnings.push({
      code: "HUMANISH_LAB_ID_MISMATCH",
      path: "id",
      message: `${ref} declares id "${r.config.id}" but is resolved by its file name "${expectedId}"; runs are recorded under "${r.config.id}"`,
    });
  }
  return {
    config: r.config,
    warnings,
    ref,
    ...(path !== undefined ? { path } : {}),
    origin,
    text,
    sha256: createHash("sha256").update(text, "utf8").digest("hex"),
  };
}

function displayPath(abs: string, root: string): string {
  const rel = relative(root, abs);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : abs;
}

/**
 * Reads a lab file: undefined when it does not exist; the text otherwise.
 * With `root`, the file's real path must stay inside `root` and it must have one hard link.
 * @throws HumanishError `HUMANISH_LAB_INVALID` for a non-regular file, a containment escape,
 *   an oversized file, non-UTF-8 bytes or a read error.
 */
async function readLabFile(abs: string, shown: string, root: string | null): Promise<string | undefined> {
  let st: Stats;
  try {
    st = await lstat(abs);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: cannot be read (${errText(e)})`, { next: "check the file's permissions" });
  }
  if (root !== null) {
    let real: string;
    let realRoot: string;
    try {
      real = await realpath(abs);
      realRoot = await realpath(root);
    } catch (e) {
      if (isNotFound(e)) return undefined; // dangling symlink: nothing there
      throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: cannot be resolved (${errText(e)})`, { next: "check the file and its links" });
    }
    const rel = relative(realRoot, real);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
      throw new HumanishError(
        "HUMANISH_LAB_INVALID",
        `${shown}: is a link that resolves outside the project (${real}); lab files must live inside the project`,
        {
          next: "copy the lab into the project, or pass its path explicitly",
        },
      );
    }
    st = await stat(abs);
    if (st.isFile() && st.nlink > 1) {
      throw new HumanishError(
        "HUMANISH_LAB_INVALID",
        `${shown}: has ${st.nlink} hard links; a project lab must be a plain file (a hard link can point outside the project)`,
        {
          next: "replace the hard link with a copy of the file",
        },
      );
    }
  } else if (st.isSymbolicLink()) {
    try {
      st = await stat(abs);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: cannot be read (${errText(e)})`, { next: "check the file and its links" });
    }
  }
  if (!st.isFile()) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: is not a regular file`, { next: "pass the path of a .yaml lab file" });
  }
  if (st.size > MAX_LAB_BYTES) throw tooBig(shown, st.size);
  const bytes = await readBounded(abs, shown);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: is not valid UTF-8`, { next: "save the lab as UTF-8 text" });
  }
}

function tooBig(shown: string, size: number): HumanishError {
  return new HumanishError("HUMANISH_LAB_INVALID", `${shown}: is ${size} bytes; a lab may be at most ${MAX_LAB_BYTES} bytes (1 MiB)`, {
    next: "shorten the lab",
  });
}

/**
 * Reads at most `MAX_LAB_BYTES + 1` bytes of `abs` (its size on the open handle, plus one): the size is checked again on the open handle
 * (the file stat'ed by path may have been replaced since), and a file that grows while it is
 * read is refused rather than read to its end.
 * @throws HumanishError `HUMANISH_LAB_INVALID` when it is too big or cannot be read.
 */
async function readBounded(abs: string, shown: string): Promise<Uint8Array> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // Non-blocking, so a path swapped for a FIFO since the stat cannot hang the open.
    fh = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = await fh.stat();
    if (!st.isFile()) throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: is not a regular file`, { next: "pass the path of a .yaml lab file" });
    const size = st.size;
    if (size > MAX_LAB_BYTES) throw tooBig(shown, size);
    const buf = new Uint8Array(size + 1);
    let filled = 0;
    for (;;) {
      if (filled === buf.length) break;
      const { bytesRead } = await fh.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    // The buffer holds one byte beyond the stat'ed size: filling it means the file grew.
    if (filled > size) {
      throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: grew while it was read (from ${size} bytes); refusing a file that is still being written`, {
        next: "run again once the file is saved",
      });
    }
    return buf.subarray(0, filled);
  } catch (e) {
    if (e instanceof HumanishError) throw e;
    throw new HumanishError("HUMANISH_LAB_INVALID", `${shown}: cannot be read (${errText(e)})`, { next: "check the file's permissions" });
  } finally {
    await fh?.close();
  }
}

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function errText(e: unknown): string {
  return (e as { code?: string })?.code ?? errorMessage(e);
}

/**
 * Every lab humanish can resolve from `cwd`: project labs in search order, then the embedded
 * labs. Labs that fail to parse are listed with their error (never thrown). When two locations
 * hold the same id, the later one carries `shadowedBy` (the ref that wins).
 */
export async function listLabs(cwd: string): Promise<LabListEntry[]> {
  const root = resolve(cwd);
  const out: LabListEntry[] = [];
  const winner = new Map<string, string>();

  for (const { dir, origin } of LAB_SEARCH_DIRS) {
    let names: string[];
    try {
      names = (await readdir(join(root, dir))).filter((n) => /\.ya?ml$/.test(n)).sort();
    } catch (e) {
      if (isNotFound(e)) continue;
      out.push({ id: dir, source: "project", origin, ref: dir, error: { code: "HUMANISH_LAB_INVALID", message: `${dir}: cannot be listed (${errText(e)})` } });
      continue;
    }
    // Within a directory `.yaml` wins over `.yml` for the same id.
    names.sort((a, b) => basename(a, extname(a)).localeCompare(basename(b, extname(b))) || (extname(a) === ".yaml" ? -1 : 1));
    for (const name of names) {
      const id = basename(name, extname(name));
      const abs = join(root, dir, name);
      const ref = displayPath(abs, root);
      const entry: LabListEntry = { id, source: "project", origin, ref };
      const prior = winner.get(id);
      if (prior !== undefined) entry.shadowedBy = prior;
      else winner.set(id, ref);
      if (!LAB_ID_PATTERN.test(id)) {
        entry.error = { code: "HUMANISH_LAB_INVALID", message: `${ref}: the file name is not a valid lab id (letters, digits, _ . - starting alphanumeric)` };
        out.push(entry);
        continue;
      }
      try {
        const text = await readLabFile(abs, ref, root);
        if (text === undefined) continue;
        describe(entry, text, ref);
      } catch (e) {
        entry.error = e instanceof HumanishError ? { code: e.code, message: e.message } : { code: "HUMANISH_LAB_INVALID", message: `${ref}: ${errText(e)}` };
      }
      out.push(entry);
    }
  }

  for (const lab of EMBEDDED_LABS) {
    const ref = `embedded:${lab.id}`;
    const aliases = Object.entries(EMBEDDED_ALIASES)
      .filter(([, target]) => target === lab.id)
      .map(([alias]) => alias);
    const entry: LabListEntry = { id: lab.id, source: "embedded", origin: "embedded", ref, ...(aliases.length ? { aliases } : {}) };
    const prior = winner.get(lab.id);
    if (prior !== undefined) entry.shadowedBy = prior;
    describe(entry, lab.text, ref);
    out.push(entry);
  }
  return out;
}

function describe(entry: LabListEntry, text: string, ref: string): void {
  const r = parseLab(text, { source: ref });
  if (!r.ok) {
    entry.error = r.error;
    return;
  }
  entry.route = selectLabBackend(r.config);
  if (r.config.title !== undefined) entry.title = r.config.title;
  if (r.config.description !== undefined) entry.description = r.config.description;
}
