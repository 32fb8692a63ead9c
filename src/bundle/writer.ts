/**
 * The run writer: owns one `.humanish/runs/<runId>/` directory. Every free-text byte goes
 * through the redactor (JSON is redacted value by value before it is serialised: keys and schema
 * words are structure and never scrubbed); every file is written atomically
 * (temp file in the same directory → fsync → rename); paths are contained in the run dir; the
 * bundle manifest `run.json` lists every artifact with its byte count and the SHA-256 of the
 * final bytes on disk.
 *
 * Lifecycle:
 *   const w = createRunWriter({cwd, runId, secrets, route, mode, lab});   // refuses an existing id
 *   await w.appendNdjson("sandbox-receipts.ndjson", {...}, {kind: "sandbox-receipts", durable: true});
 *   await w.writeStatus({phase: "participate", detail: "p1 step 2"});      // derived liveness index
 *   await w.writeJson("actor.json", trace, {kind: "actor-trace"});
 *   await w.finalize(input);                                              // run.json + status + latest.json
 *   await w.writeArtifact("report/index.html", html, {kind: "report"});   // after the fact…
 *   await w.finalize();                                                   // …re-finalize re-lists everything
 * `reopenRunWriter` (./reopen.ts) opens a sealed run to add artifacts (e.g. `humanish report
 * --run ID`) and re-seals it; `recordOrphanRelease` (./orphan-record.ts) adds a release proof
 * to a run whose controller died.
 */

import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { lstat, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import type { z } from "zod";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { writeFileAtomicSync } from "./atomic.ts";
import { deriveReview, summarizeCost } from "./derive.ts";
import { artifactRootFor, assertRunId, DERIVED_FILES, RUN_FILE, runDirFor, runsDir, safeRelPath } from "./paths.ts";
import { admitPngBytes } from "./png.ts";
import { createRedactor, escapeDelInJson, MIN_SECRET_LENGTH, type Redactor } from "./redact.ts";
import { schemaConstants } from "./schema-constants.ts";
import {
  ActorTraceSchema,
  type ArtifactEntry,
  type ArtifactKind,
  CleanupProofSchema,
  LatestRunSchema,
  type Mode,
  OrphanReleaseSchema,
  type Route,
  type RunBundle,
  type RunBundleInput,
  RunBundleInputSchema,
  RunBundleSchema,
  type RunStatus,
  RunStatusSchema,
  SandboxReceiptSchema,
  TerminalEventSchema,
  TerminalLedgersSchema,
} from "./schemas.ts";
import { SIGNATURE_FILE } from "./signing/manifest.ts";
import { sealRunDir } from "./signing/seal.ts";

/** Options of {@link createRunWriter}. */
export interface RunWriterOptions {
  /** Absolute project directory (`--cwd`). */
  cwd: string;
  /** Run id (validated; must not exist yet). */
  runId: string;
  /** Every secret VALUE provisioned for this run (runtime key, E2B key, …); scrubbed from every byte. */
  secrets: readonly (string | undefined | null)[];
  /** Recorded in `status.json` from the start, when known. */
  route?: Route;
  mode?: Mode;
  lab?: string;
  /** Status heartbeat interval in ms (default 5000; 0 disables). */
  heartbeatMs?: number;
  /** Clock (tests). */
  now?: () => Date;
}

/** Options of one artifact write. */
export interface WriteArtifactOptions {
  kind: ArtifactKind;
}

/** Status fields a route may set; the writer owns schema, runId, pid and timestamps. */
export interface StatusUpdate {
  phase: string;
  detail?: string;
  route?: Route;
  mode?: Mode;
  lab?: string;
  state?: RunStatus["state"];
  outcome?: RunStatus["outcome"];
}

/** A writer bound to one run directory. Every method throws `HumanishError`. */
export interface RunWriter {
  readonly runId: string;
  /** Absolute `<cwd>/.humanish/runs/<runId>`. */
  readonly runDir: string;
  readonly cwd: string;
  /** The redactor every write goes through (reuse it for stdout/stderr). */
  readonly redactor: Redactor;
  /**
   * Write one artifact atomically (redacted; screenshots admitted as PNG instead) and track it
   * for the manifest. Overwriting a tracked path replaces it. Returns the entry (size/hash of
   * the bytes written).
   * @throws HUMANISH_UNSAFE_ARTIFACT_PATH, HUMANISH_INVALID_ARTIFACT, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
   */
  writeArtifact(relPath: string, data: string | Uint8Array, opts: WriteArtifactOptions): Promise<ArtifactEntry>;
  /** Redact and write a JSON value (pretty, trailing newline); known kinds are schema-checked. */
  writeJson(relPath: string, value: unknown, opts: WriteArtifactOptions): Promise<ArtifactEntry>;
  /**
   * Append one record as a JSON line (redacted) to a stream written as it happens
   * (`terminal-events.ndjson`, `sandbox-receipts.ndjson`, `events.ndjson`). `durable` fsyncs
   * the line before returning (use it for sandbox receipts).
   */
  appendNdjson(relPath: string, record: unknown, opts?: { kind?: ArtifactKind; durable?: boolean }): Promise<void>;
  /** Add an existing file in the run dir (written by other means) to the manifest. */
  addArtifact(relPath: string, opts: WriteArtifactOptions): Promise<void>;
  /** Write `status.json` (derived liveness index, never listed in `run.json`). */
  writeStatus(update: StatusUpdate): Promise<void>;
  /**
   * Seal the bundle: list every tracked artifact (bytes + SHA-256 read back from disk), write
   * `run.json`, mark `status.json` finished and (first finalize of a new run) point
   * `.humanish/runs/latest.json` here; then sign run.json, status.json and every listed artifact
   * into `signature.json` with the user's key (src/bundle/signing/). A later `writeStatus`
   * re-signs. Call again with no argument after adding artifacts.
   * @throws HUMANISH_INVALID_RUN_BUNDLE when the input does not match the schema; the signing
   *   key loader's codes (HUMANISH_SIGNING_KEY_INVALID / _INSECURE / _UNAVAILABLE)
   */
  finalize(input?: RunBundleInput): Promise<RunBundle>;
  /**
   * The `run.json` that `finalize(input)` would write now (artifacts listed as they are on disk,
   * content redacted, schema-checked), without writing or sealing anything.
   * @throws HUMANISH_INVALID_RUN_BUNDLE, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
   */
  preview(input: RunBundleInput): Promise<RunBundle>;
  /** Tracked artifacts so far (path → kind). */
  tracked(): ReadonlyMap<string, ArtifactKind>;
  /** Stop the status heartbeat (finalize does this too). Idempotent. */
  close(): void;
}

const RESERVED = new Set<string>([RUN_FILE, SIGNATURE_FILE, ...DERIVED_FILES]);

/**
 * The words of every schema this writer writes: string values equal to one are structure
 * (enum and literal values), so the redactor leaves them alone and a secret value that happens to
 * be `docker` or `live` can never break a bundle. Free text is still scrubbed everywhere.
 */
const STRUCTURE_WORDS: ReadonlySet<string> = schemaConstants(
  RunBundleSchema,
  RunStatusSchema,
  LatestRunSchema,
  ActorTraceSchema,
  TerminalLedgersSchema,
  TerminalEventSchema,
  SandboxReceiptSchema,
  CleanupProofSchema,
  OrphanReleaseSchema,
);

/**
 * The redactor of a run's evidence: secrets, cwd label, secret and local-path shapes; structure
 * kept. The artifact paths of the run (`tracked`, names humanish chooses and never builds from
 * values) are structure too, so a secret that happens to be `terminal` or `sandbox` cannot turn
 * `terminal-transcript.txt` in the listing into a path that does not exist.
 */
export function evidenceRedactor(secrets: readonly (string | undefined | null)[], cwd: string, tracked: ReadonlyMap<string, unknown> = new Map()): Redactor {
  return createRedactor(secrets, { cwd, constants: { has: (v) => STRUCTURE_WORDS.has(v) || tracked.has(v) }, nameWords: NAME_WORDS });
}

/** Splits a name into its lower-case words at punctuation and camelCase humps. */
function nameWordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** The words of humanish's own names: every schema word and the fixed artifact and folder names. */
const NAME_WORDS: ReadonlySet<string> = new Set(
  [
    ...STRUCTURE_WORDS,
    ...["actor.json", "desktop-ledgers.json", "served-app.json", "report/index.html", "screenshots", "seats", "turn", "step", "final", "png", "txt"],
  ].flatMap(nameWordsOf),
);

/** Per-kind JSON schemas checked when a JSON artifact is written. */
const JSON_SCHEMAS: Partial<Record<ArtifactKind, z.ZodType>> = {
  "actor-trace": ActorTraceSchema,
  "terminal-ledgers": TerminalLedgersSchema,
};
/** Per-kind NDJSON line schemas. */
export const NDJSON_SCHEMAS: Partial<Record<ArtifactKind, z.ZodType>> = {
  "terminal-events": TerminalEventSchema,
  "sandbox-receipts": SandboxReceiptSchema,
};

/** The scorer's blocks of a bundle input, copied only when present (older bundles carry none). */
export function adapterBlocks(
  inp: Pick<RunBundle, "scorerProvenance" | "adapterScore" | "feedbackCandidates" | "adapterArtifacts">,
): Pick<RunBundle, "scorerProvenance" | "adapterScore" | "feedbackCandidates" | "adapterArtifacts"> {
  return {
    ...(inp.scorerProvenance ? { scorerProvenance: inp.scorerProvenance } : {}),
    ...(inp.adapterScore ? { adapterScore: inp.adapterScore } : {}),
    ...(inp.feedbackCandidates ? { feedbackCandidates: inp.feedbackCandidates } : {}),
    ...(inp.adapterArtifacts ? { adapterArtifacts: inp.adapterArtifacts } : {}),
  };
}

/** Atomic file write: temp in the same dir, fsync, rename. `label` names the file in errors (never an absolute path). */
async function atomicWrite(path: string, bytes: Uint8Array, label: string): Promise<void> {
  const tmp = join(dirname(path), `.tmp-${randomBytes(6).toString("hex")}`);
  try {
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not write ${label}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "check free disk space and permissions of the .humanish directory",
      cause: e,
    });
  }
}

/**
 * The lab reference as persisted: `embedded:<id>` and relative paths stay; an absolute path under
 * the project becomes project-relative; any other absolute path keeps only its file name under
 * `[external]/` (the absolute cwd and host paths are never persisted).
 */
export function labRefFor(ref: string, cwd: string): string {
  if (!ref.startsWith("/")) return ref;
  const rel = relative(cwd, ref);
  if (rel && !rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
  return `[external]/${basename(ref)}`;
}

/** Refuse a symlinked or non-directory `.humanish` / `.humanish/runs`. */
function ensureRunsDir(cwd: string): string {
  const dirs = [join(cwd, ".humanish"), runsDir(cwd)];
  for (const d of dirs) {
    let st: Stats;
    try {
      st = lstatSync(d);
    } catch {
      try {
        mkdirSync(d, { mode: 0o700 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new HumanishError(
            "HUMANISH_BUNDLE_WRITE_FAILED",
            `could not create ${relative(cwd, d)} in the project directory: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
            {
              next: "check that --cwd is a writable project directory",
              cause: e,
            },
          );
        }
      }
      st = lstatSync(d);
    }
    if (!st.isDirectory() || st.isSymbolicLink()) {
      throw new HumanishError("HUMANISH_UNSAFE_PROJECT_PATH", `${relative(cwd, d)} is not a real directory (symlink or file)`, {
        next: `remove ${relative(cwd, d)} or replace it with a plain directory`,
      });
    }
  }
  return runsDir(cwd);
}

/** What a writer starts from: a new run, or a reopened sealed one (./reopen.ts). */
export interface WriterState {
  cwd: string;
  runId: string;
  runDir: string;
  redactor: Redactor;
  tracked: Map<string, ArtifactKind>;
  input: z.output<typeof RunBundleInputSchema> | undefined;
  reopened: boolean;
  status: RunStatus | undefined;
  heartbeatMs: number;
  now: () => Date;
}

export function makeWriter(st: WriterState): RunWriter {
  let chain: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let finalizedOnce = false;
  /** Set once the bundle is signed: from then on every status rewrite re-signs it (the signature covers status.json). */
  let sealed = false;

  /** Serialise every mutation so appends and renames never interleave. */
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn, fn);
    chain = p.catch(() => undefined);
    return p;
  };

  const contained = async (relPath: string): Promise<{ rel: string; abs: string }> => {
    const rel = safeRelPath(relPath);
    if (rel === null || RESERVED.has(rel) || rel.split("/").some((s) => s.startsWith(".tmp-"))) {
      throw new HumanishError(
        "HUMANISH_UNSAFE_ARTIFACT_PATH",
        `artifact path ${JSON.stringify(relPath)} is not a safe relative path inside the run directory`,
        {
          next: "use a relative path like actor.json or screenshots/001.png (no .., no absolute paths, not run.json/status.json)",
        },
      );
    }
    // Paths are fixed names plus lab ids and counters, never values: a secret equal to a word of
    // a fixed name (`sandbox`) is a coincidence; any other secret or a shape is refused.
    if (st.redactor.nameContainsSecret(rel)) {
      throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", "artifact path contains a secret value or a secret/local-path shape", {
        next: "name artifacts with fixed names and participant ids, never with values",
      });
    }
    // Walk every parent segment: each must be a real directory (created when missing), never a symlink.
    const parts = rel.split("/");
    let cur = st.runDir;
    for (const seg of parts.slice(0, -1)) {
      cur = join(cur, seg);
      let s: Stats;
      try {
        s = await lstat(cur);
      } catch {
        try {
          await mkdir(cur, { mode: 0o700 });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
            throw new HumanishError(
              "HUMANISH_BUNDLE_WRITE_FAILED",
              `could not create ${artifactRootFor(st.runId)}/${parts.slice(0, parts.indexOf(seg) + 1).join("/")}: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
              {
                next: "check free disk space and permissions of the .humanish directory",
                cause: e,
              },
            );
          }
        }
        s = await lstat(cur);
      }
      if (!s.isDirectory() || s.isSymbolicLink()) {
        throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `artifact path ${rel}: ${seg} is not a real directory inside the run`, {
          next: "remove the symlink or file from the run directory",
        });
      }
    }
    const abs = join(st.runDir, rel);
    try {
      const s = await lstat(abs);
      if (!s.isFile() || s.isSymbolicLink() || s.nlink > 1) {
        throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `artifact path ${rel} exists and is not a plain single-link file`, {
          next: "remove it from the run directory",
        });
      }
    } catch (e) {
      if (e instanceof HumanishError) throw e;
    }
    return { rel, abs };
  };

  /**
   * The bytes to write for `data`. `serialisedJson` marks text that `redactor.json` produced:
   * its string values are already redacted, and the serialised document is never scrubbed again
   * (that would rewrite keys and schema words).
   */
  const prepareBytes = async (rel: string, data: string | Uint8Array, kind: ArtifactKind, serialisedJson = false): Promise<Uint8Array> => {
    if (kind === "screenshot") {
      if (!(data instanceof Uint8Array)) {
        throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} must be PNG bytes, got text`, { next: "pass the PNG as a Uint8Array" });
      }
      if (!/^screenshots\/.+\.png$/.test(rel)) {
        throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} must live under screenshots/ and end in .png`, {
          next: "name screenshots screenshots/NNN.png (or screenshots/<participant>/NNN.png)",
        });
      }
      const adm = await admitPngBytes(data);
      if (!adm.ok) {
        throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} was not admitted as a PNG: ${adm.code} ${adm.detail}`, {
          next: "only write frames that passed admitPng",
        });
      }
      if (st.redactor.containsSecret(data)) {
        throw new HumanishError("HUMANISH_REDACTION_FAILED", `screenshot ${rel} contains a provisioned secret value in its bytes; it was not written`, {
          next: "strip text chunks from the PNG before writing it",
        });
      }
      return data;
    }
    const out = typeof data === "string" ? new TextEncoder().encode(serialisedJson ? data : st.redactor.text(data)) : st.redactor.bytes(data);
    const schema = JSON_SCHEMAS[kind];
    let parsed: unknown;
    if (schema) {
      try {
        parsed = JSON.parse(new TextDecoder().decode(out));
      } catch {
        throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) is not valid JSON`, { next: "write it with writeJson" });
      }
      const r = schema.safeParse(parsed);
      if (!r.success) {
        throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) does not match its schema: ${zodIssues(r.error)}`, {
          next: "fix the named field (see src/bundle/schemas.ts)",
        });
      }
    }
    let asText: string | null;
    try {
      asText = new TextDecoder("utf-8", { fatal: true }).decode(out);
    } catch {
      asText = null;
    }
    if (serialisedJson && parsed === undefined) parsed = JSON.parse(asText ?? "null");
    if (serialisedJson ? st.redactor.containsSecretIn(parsed) : st.redactor.containsSecret(asText ?? out)) {
      throw new HumanishError("HUMANISH_REDACTION_FAILED", `${rel}: a secret value survived redaction; nothing was written`, {
        next: "report this as a bug: the redactor must scrub every provisioned value",
      });
    }
    return out;
  };

  const writeStatusNow = async (update: StatusUpdate): Promise<void> => {
    const now = st.now().toISOString();
    const prev = st.status;
    const next: RunStatus = {
      schema: "humanish.run-status.v1",
      runId: st.runId,
      state: update.state ?? prev?.state ?? "running",
      phase: update.phase,
      ...(update.detail !== undefined ? { detail: update.detail } : {}),
      ...((update.route ?? prev?.route) ? { route: update.route ?? prev?.route } : {}),
      ...((update.mode ?? prev?.mode) ? { mode: update.mode ?? prev?.mode } : {}),
      ...((update.lab ?? prev?.lab) ? { lab: update.lab ?? prev?.lab } : {}),
      pid: prev?.pid ?? process.pid,
      startedAt: prev?.startedAt ?? now,
      updatedAt: now,
      ...((update.state ?? prev?.state) === "finished" ? { completedAt: prev?.completedAt ?? now } : {}),
      ...((update.outcome ?? prev?.outcome) ? { outcome: update.outcome ?? prev?.outcome } : {}),
    };
    const checked = RunStatusSchema.parse(st.redactor.value(next));
    st.status = checked;
    await atomicWrite(join(st.runDir, "status.json"), new TextEncoder().encode(st.redactor.json(checked)), `${artifactRootFor(st.runId)}/status.json`);
    if (sealed) sealRunDir(st.runDir, st.runId);
  };

  const startHeartbeat = () => {
    if (timer || closed || st.heartbeatMs <= 0 || st.reopened) return;
    timer = setInterval(() => {
      if (st.status?.state !== "running") return;
      const s = st.status;
      void serial(() => writeStatusNow({ phase: s.phase, ...(s.detail !== undefined ? { detail: s.detail } : {}) })).catch(() => undefined);
    }, st.heartbeatMs);
    timer.unref?.();
  };

  const stop = () => {
    closed = true;
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  /**
   * The bundle `inp` seals into (manifest read back from disk, content redacted, schema-checked),
   * without writing anything: `finalize` writes it, `preview` hands it to the scorer seam.
   */
  const buildBundle = async (inp: z.output<typeof RunBundleInputSchema>, completedAt: string): Promise<RunBundle> => {
    const artifacts: ArtifactEntry[] = [];
    for (const [rel, kind] of [...st.tracked.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await readFile(join(st.runDir, rel)));
      } catch (e) {
        throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `artifact ${rel} vanished before finalize: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
          next: "do not modify the run directory while a run is being written",
        });
      }
      artifacts.push({ path: rel, kind, bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
    }
    const review = inp.review ?? deriveReview({ mode: inp.mode, outcome: inp.outcome, participants: inp.participants, tasks: inp.tasks });
    const bundle: RunBundle = {
      schema: "humanish.run-bundle.v1",
      runId: st.runId,
      route: inp.route,
      mode: inp.mode,
      target: inp.target,
      createdAt: inp.createdAt,
      completedAt,
      durationMs: Math.max(0, Date.parse(completedAt) - Date.parse(inp.createdAt)),
      cwd: "[target-cwd]",
      artifactRoot: artifactRootFor(st.runId),
      lab: { ...inp.lab, source: { ...inp.lab.source, ref: labRefFor(inp.lab.source.ref, st.cwd) } },
      subject: inp.subject,
      outcome: inp.outcome,
      lifecycle: inp.lifecycle,
      participants: inp.participants,
      tasks: inp.tasks,
      review,
      caps: inp.caps,
      cost: inp.cost ?? summarizeCost([]),
      cleanup: inp.cleanup,
      warnings: inp.warnings,
      redaction: {
        status: "passed",
        notes:
          inp.redactionNotes ??
          "every artifact passed the literal secret scrub, secret-shape and local-path patterns before it was written; screenshots are raw frames admitted as PNG",
      },
      artifacts,
      ...(inp.study ? { study: inp.study } : {}),
      ...adapterBlocks(inp),
      ...(inp.continues ? { continues: inp.continues } : {}),
    };
    // Everything the route supplied is redacted; the manifest (our own checked paths, sizes
    // and digests) is attached afterwards so a short secret value can never rewrite a digest.
    const { artifacts: manifest, ...content } = bundle;
    const redactedContent = st.redactor.value(content);
    if (st.redactor.containsSecretIn(redactedContent)) {
      throw new HumanishError("HUMANISH_REDACTION_FAILED", "run.json: a secret value survived redaction; nothing was written", {
        next: "report this as a bug",
      });
    }
    const checked = RunBundleSchema.safeParse({ ...redactedContent, artifacts: manifest });
    if (!checked.success) {
      throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run.json for ${st.runId} does not match humanish.run-bundle.v1: ${zodIssues(checked.error)}`, {
        next: "fix the named field of the finalize input",
      });
    }
    return checked.data;
  };

  const writer: RunWriter = {
    runId: st.runId,
    runDir: st.runDir,
    cwd: st.cwd,
    redactor: st.redactor,

    writeArtifact(relPath, data, opts) {
      return serial(async () => {
        const { rel, abs } = await contained(relPath);
        const bytes = await prepareBytes(rel, data, opts.kind);
        await atomicWrite(abs, bytes, `${artifactRootFor(st.runId)}/${rel}`);
        st.tracked.set(rel, opts.kind);
        return { path: rel, kind: opts.kind, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
      });
    },

    writeJson(relPath, value, opts) {
      return serial(async () => {
        const { rel, abs } = await contained(relPath);
        const bytes = await prepareBytes(rel, st.redactor.json(value), opts.kind, true);
        await atomicWrite(abs, bytes, `${artifactRootFor(st.runId)}/${rel}`);
        st.tracked.set(rel, opts.kind);
        return { path: rel, kind: opts.kind, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
      });
    },

    appendNdjson(relPath, record, opts = {}) {
      return serial(async () => {
        const { rel, abs } = await contained(relPath);
        const kind = opts.kind ?? st.tracked.get(rel) ?? "events";
        const redacted = st.redactor.value(record);
        const schema = NDJSON_SCHEMAS[kind];
        if (schema) {
          const r = schema.safeParse(redacted);
          if (!r.success) {
            throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) record does not match its schema: ${zodIssues(r.error)}`, {
              next: "fix the named field (see src/bundle/schemas.ts)",
            });
          }
        }
        // String values were redacted above; the serialised line is never scrubbed again (that
        // would rewrite keys and schema words).
        const line = escapeDelInJson(JSON.stringify(redacted));
        if (line.includes("\n"))
          throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel}: record serialised with a raw newline`, { next: "report this as a bug" });
        const bytes = new TextEncoder().encode(`${line}\n`);
        if (st.redactor.containsSecretIn(redacted)) {
          throw new HumanishError("HUMANISH_REDACTION_FAILED", `${rel}: a secret value survived redaction; nothing was appended`, {
            next: "report this as a bug",
          });
        }
        try {
          const fh = await open(abs, "a", 0o600);
          try {
            await fh.write(bytes);
            if (opts.durable) await fh.sync();
          } finally {
            await fh.close();
          }
        } catch (e) {
          throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not append to ${rel}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
            next: "check free disk space and permissions of the .humanish directory",
            cause: e,
          });
        }
        st.tracked.set(rel, kind);
      });
    },

    addArtifact(relPath, opts) {
      return serial(async () => {
        const { rel, abs } = await contained(relPath);
        let bytes: Uint8Array;
        try {
          bytes = new Uint8Array(await readFile(abs));
        } catch {
          throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `cannot add ${rel}: no such file in the run directory`, {
            next: "write it with writeArtifact instead",
          });
        }
        // Re-check what other code wrote: screenshots admitted, text free of secrets and shapes.
        const prepared = await prepareBytes(rel, bytes, opts.kind);
        if (prepared.byteLength !== bytes.byteLength || sha256Hex(prepared) !== sha256Hex(bytes))
          await atomicWrite(abs, prepared, `${artifactRootFor(st.runId)}/${rel}`);
        st.tracked.set(rel, opts.kind);
      });
    },

    writeStatus(update) {
      return serial(async () => {
        await writeStatusNow(update);
        if ((update.state ?? "running") === "running") startHeartbeat();
      });
    },

    finalize(input) {
      return serial(async () => {
        if (input !== undefined) {
          const r = RunBundleInputSchema.safeParse(input);
          if (!r.success) {
            throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run bundle input for ${st.runId} is invalid: ${zodIssues(r.error)}`, {
              next: "fix the named field (see RunBundleInputSchema in src/bundle/schemas.ts)",
            });
          }
          st.input = r.data;
        }
        const inp = st.input;
        if (!inp) {
          throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `finalize of ${st.runId} needs the run input the first time`, {
            next: "call finalize(input) with a RunBundleInput",
          });
        }
        const completedAt = inp.completedAt ?? st.now().toISOString();
        inp.completedAt = completedAt;
        const data = await buildBundle(inp, completedAt);
        const text = `${escapeDelInJson(JSON.stringify(data, null, 2))}\n`;
        await atomicWrite(join(st.runDir, RUN_FILE), new TextEncoder().encode(text), `${artifactRootFor(st.runId)}/run.json`);
        if (!st.reopened && !finalizedOnce) {
          finalizedOnce = true;
          stop();
          const prevPhase = st.status;
          await writeStatusNow({
            phase: "done",
            state: "finished",
            outcome: {
              state: data.outcome.state,
              verdict: data.review.verdict,
              participants: { total: data.review.participants.total, reachedGoal: data.review.participants.reachedGoal },
              estimatedCostUsd: data.cost.estimatedTotalUsd,
              durationMs: data.durationMs,
              ...(prevPhase?.outcome?.ok !== undefined ? { ok: prevPhase.outcome.ok } : {}),
            },
          });
          const latest = LatestRunSchema.parse({
            schema: "humanish.latest-run.v1",
            runId: st.runId,
            path: artifactRootFor(st.runId),
            updatedAt: st.now().toISOString(),
          });
          await atomicWrite(
            join(runsDir(st.cwd), "latest.json"),
            new TextEncoder().encode(`${JSON.stringify(latest, null, 2)}\n`),
            ".humanish/runs/latest.json",
          );
        }
        // Sign what is now on disk: every listed artifact, run.json and status.json.
        sealRunDir(st.runDir, st.runId);
        sealed = true;
        return data;
      });
    },

    preview(input) {
      return serial(async () => {
        const r = RunBundleInputSchema.safeParse(input);
        if (!r.success) {
          throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run bundle input for ${st.runId} is invalid: ${zodIssues(r.error)}`, {
            next: "fix the named field (see RunBundleInputSchema in src/bundle/schemas.ts)",
          });
        }
        return buildBundle(r.data, r.data.completedAt ?? st.now().toISOString());
      });
    },

    tracked: () => st.tracked,
    close: stop,
  };
  return writer;
}

/**
 * Create the run directory `<cwd>/.humanish/runs/<runId>` (exclusively) and return its writer.
 * Writes the first `status.json` (state running, phase `start`) before returning.
 * @throws HUMANISH_INVALID_RUN_ID for a malformed id; HUMANISH_SECRET_IN_IDENTIFIER when the run id
 *         or lab id contains a secret value; HUMANISH_RUN_ID_IN_USE when the run exists;
 *         HUMANISH_UNSAFE_PROJECT_PATH when `.humanish` or `runs` is a symlink; HUMANISH_BUNDLE_WRITE_FAILED
 */
export function createRunWriter(opts: RunWriterOptions): RunWriter {
  assertRunId(opts.runId);
  // Identifiers are directory names and structure, never scrubbed: one carrying a secret value
  // is refused before anything is written.
  const secretValues = opts.secrets.filter((v): v is string => typeof v === "string" && v.length >= MIN_SECRET_LENGTH);
  for (const [what, value] of [
    ["run id", opts.runId],
    ["lab id", opts.lab ?? ""],
  ] as const) {
    if (secretValues.some((v) => value.includes(v))) {
      throw new HumanishError("HUMANISH_SECRET_IN_IDENTIFIER", `the ${what} contains the value of a secret variable; nothing was written`, {
        next: what === "run id" ? "choose another --run-id (or omit it)" : "rename the lab's id",
      });
    }
  }
  ensureRunsDir(opts.cwd);
  const runDir = runDirFor(opts.cwd, opts.runId);
  try {
    mkdirSync(runDir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      throw new HumanishError("HUMANISH_RUN_ID_IN_USE", `run id ${opts.runId} already names a run in .humanish/runs/`, {
        next: "choose another --run-id, or omit it to get a fresh one",
      });
    }
    throw new HumanishError(
      "HUMANISH_BUNDLE_WRITE_FAILED",
      `could not create the run directory .humanish/runs/${opts.runId}: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
      {
        next: "check that --cwd is a writable project directory",
        cause: e,
      },
    );
  }
  const now = opts.now ?? (() => new Date());
  const tracked = new Map<string, ArtifactKind>();
  const redactor = evidenceRedactor(opts.secrets, opts.cwd, tracked);
  const startedAt = now().toISOString();
  const status: RunStatus = RunStatusSchema.parse(
    redactor.value({
      schema: "humanish.run-status.v1",
      runId: opts.runId,
      state: "running",
      phase: "start",
      ...(opts.route ? { route: opts.route } : {}),
      ...(opts.mode ? { mode: opts.mode } : {}),
      ...(opts.lab ? { lab: opts.lab } : {}),
      pid: process.pid,
      startedAt,
      updatedAt: startedAt,
    }),
  );
  writeFileAtomicSync(join(runDir, "status.json"), new TextEncoder().encode(redactor.json(status)), `${artifactRootFor(opts.runId)}/status.json`);
  const w = makeWriter({
    cwd: opts.cwd,
    runId: opts.runId,
    runDir,
    redactor,
    tracked,
    input: undefined,
    reopened: false,
    status,
    heartbeatMs: opts.heartbeatMs ?? 5000,
    now,
  });
  return w;
}
