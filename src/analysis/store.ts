/**
 * Reading a run for analysis and storing an attempt in it.
 *
 * Reading: the run directory is walked once and verified; the selector then reads the text
 * files verify held, and each screenshot it selects is read again through the safe reader and
 * must hash to the digest verify took of it (so what is sent is what verify checked, while the
 * bundle's screenshots are never all in memory). A bundle that fails `verify`, or a dry-run
 * bundle (nothing ran, nothing to analyse), is refused.
 *
 * Storing: `analysis/<NNNN>/{analysis,diagnostics,requests}.json` are written through the
 * bundle writer (redacted like every artifact), listed with their digests in `run.json`, and
 * the bundle re-sealed, so `verify` re-checks them. The report, when the run has one, is
 * re-rendered so it shows the findings.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  type AnalysisDiagnostics,
  AnalysisDiagnosticsSchema,
  type AnalysisRecord,
  AnalysisRecordSchema,
  type AnalysisRequests,
  analysisPathParts,
  defaultTrust,
  isPidAlive,
  RunBundleSchema,
  reopenRunWriter,
  type TrustSet,
  type VerifyResult,
  verifyFiles,
  verifyRun,
} from "../bundle/index.ts";
import { describeSafeReadFailure, safeReadFile } from "../bundle/safe-read.ts";
import type { DigestedBundleFile } from "../bundle/verify/core.ts";
import { decodeGarbageWindow, readBundleDir, VERIFY_LIMITS } from "../bundle/verify/disk.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import type { BundleView } from "./select.ts";

/** Splits `<cwd>/.humanish/runs/<runId>` into its project directory and run id. */
function splitRunDir(runDir: string): { cwd: string; runId: string } {
  return { cwd: dirname(dirname(dirname(runDir))), runId: basename(runDir) };
}

function failedChecks(v: VerifyResult): string {
  const failed = v.checks.filter((c) => !c.ok);
  return failed.length ? failed.map((c) => `${c.name} (${c.message})`).join("; ") : (v.error?.message ?? "nothing verified");
}

/**
 * A reader of the screenshots verify digested: the bytes at `path`, read through the safe
 * reader, when they hash to what verify saw. Each read counts the frame's decode (the selector
 * decodes what it reads) toward the walk's decode window, so the scratch of the frames a
 * packet decodes is collected as it goes rather than piling up.
 * @throws HumanishError HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED when the file is refused or changed since verify
 */
function verifiedImageReader(runDir: string, runId: string, digested: readonly DigestedBundleFile[]): (path: string) => Uint8Array {
  const facts = new Map(digested.map((d) => [d.path, d]));
  const window = decodeGarbageWindow();
  const refuse = (path: string, why: string) =>
    new HumanishError("HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED", `run ${runId}: ${path} ${why}; nothing was sent`, {
      next: `run \`humanish verify --run ${runId}\` and analyse the run once it verifies`,
    });
  return (path) => {
    const r = safeReadFile(join(runDir, path), VERIFY_LIMITS.maxFileBytes, { singleLink: false });
    if (!r.ok) throw refuse(path, `is refused: ${describeSafeReadFailure(r, VERIFY_LIMITS.maxFileBytes)}`);
    const f = facts.get(path);
    if (!f || sha256Hex(r.bytes) !== f.sha256) throw refuse(path, "changed after it verified (SHA-256 differs)");
    window.add(f.admission.ok ? f.admission.width * f.admission.height : 0);
    return r.bytes;
  };
}

/**
 * The verified bundle at `runDir`, walked once: text files held (but the rendered report),
 * screenshots by digest (read again, and checked against that digest, only when selected).
 * @throws HumanishError HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED (verify failed: names the checks),
 *   HUMANISH_ANALYSIS_DRY_RUN_BUNDLE (a contract-only run)
 */
export async function loadVerifiedBundle(runDir: string, trust: TrustSet = defaultTrust()): Promise<BundleView> {
  const runId = basename(runDir);
  const walked = await readBundleDir(runDir);
  const v = await verifyFiles({ run: runId, ...walked, trust });
  if (!v.ok)
    throw new HumanishError("HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED", `run ${runId} does not verify, so it is not analysed: ${failedChecks(v).slice(0, 600)}`, {
      next: `run \`humanish verify --run ${runId}\` to see what is wrong; only an intact bundle is analysed`,
    });
  const runJson = walked.files.find((f) => f.path === "run.json")?.bytes;
  const bundle = RunBundleSchema.parse(JSON.parse(new TextDecoder().decode(runJson)));
  // The rendered report is humanish's own page about the bundle, never evidence the packet
  // carries, and often its largest text file (it inlines screenshots): it is not kept.
  const reports = new Set(bundle.artifacts.filter((a) => a.kind === "report").map((a) => a.path));
  const files = new Map(walked.files.filter((f) => !reports.has(f.path)).map((f) => [f.path, f.bytes]));
  if (bundle.mode !== "live")
    throw new HumanishError(
      "HUMANISH_ANALYSIS_DRY_RUN_BUNDLE",
      `run ${runId} is a dry run (contract only): no participant ran, so there is nothing to analyse`,
      {
        next: "run the lab live (humanish lab run <lab> --live), then analyse that run",
      },
    );
  const sizes = new Map(walked.digested.map((d) => [d.path, d.size]));
  return { bundle, files, images: { sizes, read: verifiedImageReader(runDir, runId, walked.digested) } };
}

/**
 * What of a view the steps after selection read: the run record and its analysis files. The
 * selection has copied what it sends, so the bundle's other texts can be collected before the
 * token counter's tables are built, which is the analysis's highest point of memory.
 */
export function attemptsView(view: BundleView): BundleView {
  return { bundle: view.bundle, files: new Map([...view.files].filter(([path]) => analysisPathParts(path) !== null)) };
}

/** The attempts a bundle lists, ascending (`0001`, `0002`, …). */
export function listedAttempts(view: BundleView): string[] {
  const out = new Set<string>();
  for (const a of view.bundle.artifacts) {
    const p = analysisPathParts(a.path);
    if (p && a.kind === "analysis") out.add(p.attempt);
  }
  return [...out].sort();
}

/** The next attempt id after those listed. */
export function nextAttempt(view: BundleView): string {
  const last = listedAttempts(view).at(-1);
  return String((last ? Number(last) : 0) + 1).padStart(4, "0");
}

/** One stored attempt, parsed (null when it does not parse: verify would have refused the bundle). */
export function readAttempt(view: BundleView, attempt: string): { record: AnalysisRecord; diagnostics: AnalysisDiagnostics | null } | null {
  const read = (file: string) => {
    const bytes = view.files.get(`analysis/${attempt}/${file}`);
    if (!bytes) return undefined;
    try {
      return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    } catch {
      return undefined;
    }
  };
  const r = AnalysisRecordSchema.safeParse(read("analysis.json"));
  if (!r.success) return null;
  const d = AnalysisDiagnosticsSchema.safeParse(read("diagnostics.json"));
  return { record: r.data, diagnostics: d.success ? d.data : null };
}

/** The three documents of one attempt. */
export interface AttemptDocuments {
  record: AnalysisRecord;
  diagnostics: AnalysisDiagnostics;
  requests: AnalysisRequests;
}

/**
 * Write `docs` as attempt `docs.record.attempt` of the run at `runDir` (every value scrubbed of
 * `opts.secrets`), re-seal, re-render the report when there is one, and verify the result.
 * @throws HumanishError HUMANISH_ANALYSIS_STORE_UNVERIFIED when the bundle does not verify after
 *   the write; the bundle writer's codes (HUMANISH_BUNDLE_NOT_RESEALABLE, …)
 */
export async function storeAttempt(
  runDir: string,
  docs: AttemptDocuments,
  opts: { hadReport: boolean; secrets: readonly string[] },
): Promise<{ artifactPath: string; verify: VerifyResult }> {
  const { cwd, runId } = splitRunDir(runDir);
  const dir = `analysis/${docs.record.attempt}`;
  const writer = await reopenRunWriter({ cwd, runId, secrets: opts.secrets });
  try {
    await writer.writeJson(`${dir}/analysis.json`, docs.record, { kind: "analysis" });
    await writer.writeJson(`${dir}/diagnostics.json`, docs.diagnostics, { kind: "analysis" });
    await writer.writeJson(`${dir}/requests.json`, docs.requests, { kind: "analysis" });
    await writer.finalize();
  } finally {
    writer.close();
  }
  if (opts.hadReport) {
    const { writeReport } = await import("../report/write.ts");
    await writeReport(runDir);
  }
  const v = await verifyRun(runDir);
  if (!v.ok)
    throw new HumanishError(
      "HUMANISH_ANALYSIS_STORE_UNVERIFIED",
      `run ${runId} does not verify after analysis attempt ${docs.record.attempt} was added: ${failedChecks(v).slice(0, 600)}`,
      {
        next: `run \`humanish verify --run ${runId}\`; report this as a bug with the run directory`,
      },
    );
  return { artifactPath: join(".humanish", "runs", runId, dir, "analysis.json"), verify: v };
}

/**
 * Run `fn` holding the run's analysis lock: `.humanish/analysis-locks/<runId>/` (outside the
 * run directory, so the bundle never carries it), made exclusively and removed after. Two
 * analyses of one run would otherwise both take the same attempt number and re-seal over each
 * other. A lock whose owner process is gone is taken over.
 * @throws HumanishError HUMANISH_ANALYSIS_BUSY when another live process holds it
 */
export async function withAnalysisLock<T>(runDir: string, fn: () => Promise<T>): Promise<T> {
  const { cwd, runId } = splitRunDir(runDir);
  const dir = join(cwd, ".humanish", "analysis-locks", runId);
  mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
  const take = () => {
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "owner.json"), JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
  };
  try {
    take();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    let pid: number | null = null;
    try {
      pid = (JSON.parse(readFileSync(join(dir, "owner.json"), "utf8")) as { pid?: number }).pid ?? null;
    } catch {
      pid = null;
    }
    if (pid !== null && isPidAlive(pid))
      throw new HumanishError("HUMANISH_ANALYSIS_BUSY", `another analysis of run ${runId} is running (process ${pid})`, {
        next: "wait for it to finish, then run `humanish analyze show` to see its result",
      });
    rmSync(dir, { recursive: true, force: true });
    take();
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
