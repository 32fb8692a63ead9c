/**
 * Loading a lab's product adapter (its scorer module), fail-closed and before any sandbox, key
 * read or spend: `humanish lab run` calls {@link loadScorer} right after the lab is resolved.
 *
 * The module is named by `review.scorer.ref` (relative to the lab file's folder, and must stay
 * inside it) or by `--scorer <path>` (relative to the project directory, and must stay inside
 * it; the flag wins; an absolute flag path inside the project is accepted). The module is
 * imported, and its hooks run, in a child process of this same program (./runner.ts,
 * ./child.ts) with Bun's own loader, so a `.ts` file needs no build step, and the child cannot
 * exit or patch the humanish process. Whenever a Docker engine is usable that child runs in a
 * sandbox container of its own (./confine.ts): no network, no home, no host file but a copy of
 * the scorer's folder, so neither the module's top-level code nor its hooks can read a key,
 * the signing key or another run. Without an engine it runs only when the operator opts in.
 *
 * Refusals, in the order they are checked:
 * - `HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND`: the lab's route, target or participant cannot
 *   give the scoring context (see {@link scorerBackendProblem});
 * - `HUMANISH_LAB_SCORER_BAD_REF`: absolute, escaping its base folder (also through a symlink),
 *   an extension Bun cannot import, or a manifest ref on an embedded lab (it has no folder);
 * - `HUMANISH_LAB_SCORER_NOT_FOUND`: nothing (or not a regular file) at the path;
 * - `HUMANISH_LAB_SCORER_UNCONFINED`: no Docker engine is usable and the operator did not opt
 *   in to an unconfined scorer (see ./confine.ts);
 * - `HUMANISH_LAB_SCORER_LOAD_FAILED`: the import throws (syntax error, a missing import, a
 *   throw at top level) or the file is over {@link MAX_SCORER_BYTES};
 * - `HUMANISH_LAB_SCORER_NO_HOOKS`: it exports none of `score`, `deriveFeedback`,
 *   `deriveArtifacts` as a function (named exports; a default export is not read).
 */
import { lstat, readFile, realpath } from "node:fs/promises";
import { dirname, extname, isAbsolute, relative, resolve, sep } from "node:path";
import { findActor } from "../actor-registry/registry.ts";
import type { ScorerConfinement, ScorerHook, ScorerProvenance } from "../bundle/schemas-adapter.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import type { LabConfig } from "../lab/schema.ts";
import { type Confinement, chooseConfinement, UNCONFINED_OPT_IN_ENV, UNCONFINED_POWERS } from "./confine.ts";
import { type ChildResult, runChild, SCORER_LOAD_TIMEOUT_MS } from "./runner.ts";

/** Extensions Bun's runtime loader imports without a build step. */
export const SCORER_EXTENSIONS: readonly string[] = [".ts", ".mts", ".js", ".mjs", ".cjs"];

/** Largest scorer module accepted, bytes (a scorer is a small file; its own imports are not counted). */
export const MAX_SCORER_BYTES = 4 * 1024 * 1024;

/** The hook names (they run in the order score, deriveArtifacts, deriveFeedback, so feedback may cite the files the adapter added). */
export const SCORER_HOOKS: readonly ScorerHook[] = ["score", "deriveFeedback", "deriveArtifacts"];

/** A loaded scorer: where its module is and the provenance recorded in the bundle (the hooks run in a child process, see ./runner.ts). */
export interface LoadedScorer {
  /** Real path of the module file (checked inside its base folder). */
  path: string;
  /** `hooks` is set to `ran` or `loaded-only` when the run is scored; `exports` are the hooks the module exports; `confinement` lists the load's container. */
  provenance: Omit<ScorerProvenance, "hooks">;
  /** Where its hooks run: the same place it was loaded. */
  confinement: Confinement;
}

/** What {@link loadScorer} needs to know about the lab and the command line. */
export interface ScorerRequest {
  config: LabConfig;
  /** Absolute path of the lab file; absent for an embedded lab. */
  labPath?: string;
  /** `--scorer <path>`, when given. */
  flag?: string;
  /** Absolute project directory (`--cwd`). */
  cwd: string;
  /** The command's environment (process env merged with `--env-file`): the Docker engine and the unconfined opt-in. Default process.env. */
  env?: Record<string, string | undefined>;
}

/**
 * The lab targets whose lanes write the evidence the scoring context is assembled from (an actor
 * trace per seat, plus the terminal ledgers and transcript on the terminal route), per route. A
 * new target is refused until it is added here, rather than scored from missing evidence.
 */
export const SCORER_TARGETS: Readonly<Record<LabConfig["subject"]["source"], readonly string[]>> = {
  "terminal-product": ["docker", "e2b-terminal"],
  "app-url": ["local", "e2b-desktop"],
};

/**
 * Why this lab cannot give a scorer its context, or undefined when it can: its target is not in
 * {@link SCORER_TARGETS}, or its participant type records no structured trace.
 */
export function scorerBackendProblem(config: Pick<LabConfig, "subject" | "execution" | "actors">): string | undefined {
  const source = config.subject.source;
  const target = config.execution.target;
  const targets = SCORER_TARGETS[source] ?? [];
  if (!targets.includes(target))
    return `execution.target ${target} (subject.source ${source}) has no scoring context; scorers run on ${targets.join(", ") || "no target of this source"}`;
  const type = config.actors[0]?.type ?? "(none)";
  const actor = findActor(type);
  if (!actor?.capabilities.structuredTrace) return `the ${type} participant records no structured trace, which the scoring context is made of`;
  return undefined;
}

function badRef(message: string, next: string): HumanishError {
  return new HumanishError("HUMANISH_LAB_SCORER_BAD_REF", message, { next });
}

/** True when `child` is `base` itself or inside it. */
function inside(base: string, child: string): boolean {
  const rel = relative(base, child);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/**
 * Resolve, check and import the lab's scorer; null when neither the lab nor `--scorer` names
 * one. Never starts anything but the module's own top-level code.
 * @throws HumanishError `HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND`, `_BAD_REF`, `_NOT_FOUND`, `_LOAD_FAILED`, `_NO_HOOKS` (see the module doc)
 */
export async function loadScorer(req: ScorerRequest): Promise<LoadedScorer | null> {
  const manifestRef = req.config.review?.scorer?.ref;
  const ref = req.flag ?? manifestRef;
  if (ref === undefined) return null;
  const source: ScorerProvenance["source"] = req.flag !== undefined ? "cli-flag" : "manifest";
  const where = whereOf(source);

  const backend = scorerBackendProblem(req.config);
  if (backend) {
    throw new HumanishError("HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND", `lab ${req.config.id}: ${where} names a scorer, but ${backend}`, {
      next: `remove ${where}, or run the lab on ${Object.values(SCORER_TARGETS).flat().join(" / ")} with a participant that records a trace`,
    });
  }

  const real = await resolveScorerFile(req, ref, source);
  return loadScorerModule(real, ref, source, { env: req.env ?? process.env });
}

/**
 * Check the lab's scorer reference without importing it (for `lab inspect` and `doctor --lab`):
 * the backend, the path rules and that a regular file is there. Null when none is declared.
 * @throws HumanishError `HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND`, `_BAD_REF`, `_NOT_FOUND`
 */
export async function checkScorerRef(req: ScorerRequest): Promise<string | null> {
  const ref = req.flag ?? req.config.review?.scorer?.ref;
  if (ref === undefined) return null;
  const source: ScorerProvenance["source"] = req.flag !== undefined ? "cli-flag" : "manifest";
  const backend = scorerBackendProblem(req.config);
  if (backend) {
    throw new HumanishError("HUMANISH_LAB_SCORER_UNSUPPORTED_BACKEND", `lab ${req.config.id}: ${whereOf(source)} names a scorer, but ${backend}`, {
      next: `remove ${whereOf(source)}, or run the lab on ${Object.values(SCORER_TARGETS).flat().join(" / ")} with a participant that records a trace`,
    });
  }
  return resolveScorerFile(req, ref, source);
}

/** How a reference is named in messages. */
function whereOf(source: ScorerProvenance["source"]): string {
  return source === "cli-flag" ? "--scorer" : "review.scorer.ref";
}

/**
 * The real path of the scorer `ref` names, checked to stay inside its base folder.
 * @throws HumanishError `HUMANISH_LAB_SCORER_BAD_REF`, `HUMANISH_LAB_SCORER_NOT_FOUND`
 */
async function resolveScorerFile(req: ScorerRequest, ref: string, source: ScorerProvenance["source"]): Promise<string> {
  const where = whereOf(source);
  if (source === "manifest" && req.labPath === undefined) {
    throw badRef(
      `lab ${req.config.id} is embedded in the binary: review.scorer.ref has no lab folder to be relative to`,
      "pass the module with --scorer <path>",
    );
  }
  const base = source === "cli-flag" ? resolve(req.cwd) : dirname(req.labPath!);
  const baseName = source === "cli-flag" ? "the project directory" : "the lab's folder";
  if (ref.trim() === "" || ref.includes("\u0000") || ref.includes("\\")) {
    throw badRef(`${where} ${JSON.stringify(ref)} is not a usable path (empty, NUL or backslash)`, `write ${where} as a relative path with / separators`);
  }
  const absInside = source === "cli-flag" && isAbsolute(ref) && inside(base, resolve(ref));
  if (!absInside && (isAbsolute(ref) || /^[A-Za-z]:/.test(ref))) {
    throw badRef(`${where} ${JSON.stringify(ref)} is absolute; it must be relative to ${baseName}`, `write it relative to ${baseName}, e.g. ./scorer.ts`);
  }
  const ext = extname(ref);
  if (!SCORER_EXTENSIONS.includes(ext)) {
    throw badRef(
      `${where} ${JSON.stringify(ref)} has extension ${JSON.stringify(ext)}; a scorer is one of ${SCORER_EXTENSIONS.join(", ")}`,
      "point it at the module file itself",
    );
  }
  const abs = resolve(base, ref);
  if (!inside(base, abs)) {
    throw badRef(`${where} ${JSON.stringify(ref)} leaves ${baseName}`, `move the scorer into ${baseName} and name it from there`);
  }

  let real: string;
  try {
    const st = await lstat(abs);
    real = await realpath(abs);
    const target = st.isSymbolicLink() ? await lstat(real) : st;
    if (!target.isFile()) throw Object.assign(new Error("not a regular file"), { code: "ENOTFILE" });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new HumanishError(
      "HUMANISH_LAB_SCORER_NOT_FOUND",
      `${where} ${JSON.stringify(ref)}: ${code === "ENOTFILE" ? "is not a regular file" : `no file there (${code})`} in ${baseName}`,
      { next: `create the module or fix ${where}` },
    );
  }
  if (!inside(await realpath(base), real)) {
    throw badRef(`${where} ${JSON.stringify(ref)} resolves (through a symlink) outside ${baseName}`, `put the scorer itself inside ${baseName}`);
  }
  return real;
}

/**
 * Read and digest the module at `real`, and import it in the scorer's child process — where
 * `o.confinement` says, else where {@link chooseConfinement} decides for `o.env` (default
 * process.env); its path and provenance. (The digest covers this file's bytes, not the files it
 * imports.) `o.loadMs` bounds the import (default {@link SCORER_LOAD_TIMEOUT_MS}).
 * @throws HumanishError `HUMANISH_LAB_SCORER_UNCONFINED`, `HUMANISH_LAB_SCORER_LOAD_FAILED`, `HUMANISH_LAB_SCORER_NO_HOOKS`
 */
export async function loadScorerModule(
  real: string,
  ref: string,
  source: ScorerProvenance["source"],
  o: { confinement?: Confinement; env?: Record<string, string | undefined>; loadMs?: number } = {},
): Promise<LoadedScorer> {
  const where = whereOf(source);

  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(real));
  } catch (e) {
    throw new HumanishError(
      "HUMANISH_LAB_SCORER_LOAD_FAILED",
      `${where} ${JSON.stringify(ref)} could not be read (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      {
        next: "check the file's permissions",
      },
    );
  }
  if (bytes.byteLength > MAX_SCORER_BYTES) {
    throw new HumanishError(
      "HUMANISH_LAB_SCORER_LOAD_FAILED",
      `${where} ${JSON.stringify(ref)} is ${bytes.byteLength} bytes; a scorer may be at most ${MAX_SCORER_BYTES}`,
      {
        next: "keep the scorer small and import its helpers from other files",
      },
    );
  }

  const confinement = o.confinement ?? (await chooseConfinement(o.env ?? process.env));
  const loadMs = o.loadMs ?? SCORER_LOAD_TIMEOUT_MS;
  const child: ChildResult = await runChild({ op: "load", path: real }, { loadMs, hookMs: loadMs, confinement, digest: sha256Hex(bytes) }).catch(
    (e: unknown) => ({
      hooks: [],
      stopped: { kind: "exited" as const, detail: `the scorer's process could not start: ${isHumanishError(e) ? `${e.code}: ${e.message}` : String(e)}` },
    }),
  );
  const loaded = child.load;
  if (loaded?.t !== "loaded") {
    const why = loaded?.t === "load-failed" ? loaded.message : (child.stopped?.detail ?? "no reply");
    throw new HumanishError("HUMANISH_LAB_SCORER_LOAD_FAILED", `${where} ${JSON.stringify(ref)} did not load: ${why.slice(0, 500)}`, {
      next:
        confinement.mode === "container"
          ? `fix the module (check it alone with: bun ${ref}); in its sandbox it sees only a copy of its own folder, so imports from outside that folder or of installed packages do not resolve`
          : `fix the module (check it alone with: bun ${ref})`,
    });
  }
  const exported = SCORER_HOOKS.filter((h) => loaded.exports.includes(h));
  if (exported.length === 0) {
    const notes = [...loaded.notFunctions, ...(loaded.hasDefault ? ["a default export is not read: export each hook by name"] : [])];
    throw new HumanishError(
      "HUMANISH_LAB_SCORER_NO_HOOKS",
      `${where} ${JSON.stringify(ref)} exports none of ${SCORER_HOOKS.join(", ")} as a function${notes.length ? ` (${notes.join("; ")})` : ""}`,
      { next: "export at least one hook by name, e.g. export function score(ctx) { … }" },
    );
  }
  return {
    path: real,
    provenance: {
      schema: "humanish.scorer-provenance.v1",
      ref,
      digest: sha256Hex(bytes),
      source,
      exports: exported,
      confinement: confinementEvidence(confinement, child),
    },
    confinement,
  };
}

/** The opt-in as the bundle records it. */
const OPT_IN = `${UNCONFINED_OPT_IN_ENV}=1` as const;

/** The bundle's record of where the scorer ran, with the container of `child` (when it had one). */
export function confinementEvidence(c: Confinement, child: Pick<ChildResult, "release">, before?: ScorerConfinement): ScorerConfinement {
  if (c.mode === "unconfined") return { mode: "unconfined", reason: `${c.reason}; unconfined, ${UNCONFINED_POWERS}`, optIn: OPT_IN };
  const r = child.release;
  const containers = [...(before?.containers ?? []), ...(r ? [{ id: r.id, outcome: r.outcome, reason: r.reason.slice(0, 2000), at: r.at }] : [])];
  return { mode: "container", image: c.image, containers };
}
