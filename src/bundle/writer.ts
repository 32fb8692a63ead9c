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
 *
 * The methods live beside this file by concern, each a function of the writer's state
 * (./writer-state.ts): artifact paths (./writer-path.ts), artifacts and blobs
 * (./writer-artifacts.ts), NDJSON streams (./writer-ndjson.ts), status and its heartbeat
 * (./writer-status.ts), the run.json content (./writer-bundle.ts) and sealing
 * (./writer-seal.ts). `makeWriter` puts every mutation through one queue.
 */

import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { join, relative } from "node:path";
import { HumanishError } from "../errors.ts";
import { writeFileAtomicSync } from "./atomic.ts";
import { artifactRootFor, assertRunId, runDirFor, runsDir } from "./paths.ts";
import { createRedactor, MIN_SECRET_LENGTH, type Redactor } from "./redact.ts";
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
  RunBundleSchema,
  type RunStatus,
  RunStatusSchema,
  SandboxReceiptSchema,
  TerminalEventSchema,
  TerminalLedgersSchema,
} from "./schemas.ts";
import { addArtifactNow, type WriteArtifactOptions, writeArtifactNow, writeJsonNow } from "./writer-artifacts.ts";
import { appendNdjsonNow } from "./writer-ndjson.ts";
import { finalizeNow, previewNow } from "./writer-seal.ts";
import { liveWriterState, serial, type WriterState } from "./writer-state.ts";
import { type StatusUpdate, stopHeartbeat, updateStatusNow } from "./writer-status.ts";

export type { WriteArtifactOptions } from "./writer-artifacts.ts";
export { adapterBlocks, labRefFor } from "./writer-bundle.ts";
export { NDJSON_SCHEMAS } from "./writer-ndjson.ts";
export type { WriterState } from "./writer-state.ts";
export type { StatusUpdate } from "./writer-status.ts";

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

/**
 * The writer over `st` (a new run from {@link createRunWriter}, or a reopened one from
 * ./reopen.ts): every method that touches the run directory runs in one queue, in call order, so
 * appends and renames never interleave; `tracked` and `close` act at once.
 */
export function makeWriter(st: WriterState): RunWriter {
  const w = liveWriterState(st);
  return {
    runId: w.runId,
    runDir: w.runDir,
    cwd: w.cwd,
    redactor: w.redactor,
    writeArtifact: (relPath, data, opts) => serial(w, () => writeArtifactNow(w, relPath, data, opts)),
    writeJson: (relPath, value, opts) => serial(w, () => writeJsonNow(w, relPath, value, opts)),
    appendNdjson: (relPath, record, opts = {}) => serial(w, () => appendNdjsonNow(w, relPath, record, opts)),
    addArtifact: (relPath, opts) => serial(w, () => addArtifactNow(w, relPath, opts)),
    writeStatus: (update) => serial(w, () => updateStatusNow(w, update)),
    finalize: (input) => serial(w, () => finalizeNow(w, input)),
    preview: (input) => serial(w, () => previewNow(w, input)),
    tracked: () => w.tracked,
    close: () => stopHeartbeat(w),
  };
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
