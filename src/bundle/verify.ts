/**
 * `verifyRun` — fail-closed verification of one run directory (reference contracts.md §3;
 * issue 2 §10). Pure apart from reading the given directory: it never follows symlinks, never
 * reads outside `runDir`, never writes.
 *
 * Checks, in report order (each reported in `checks[]` with `name`, `ok`, `message`):
 *  1 `run.json exists`        2 `run schema`            3 `run bundle shape`
 *  4 `redaction passed`       5 `storage containment`   6 `artifacts intact`
 *  7 `no unlisted files`      8 `public-safety scan`    9 `artifact schemas`
 * 10 `screenshots admitted`  11 `terminal-product evidence` (live terminal; dry run exempt)
 * 11b `browser evidence` (live browser: trace lane, desktop geometry, a screenshot for a pass)
 * 12 `cleanup proven`        13 `caps respected`        14 `cost labeling`
 * 15 `actor engagement`      16 `verdict consistency`
 * Files beside the listed artifacts: `run.json`, `status.json` (derived) and `orphan-release.json`
 * (after-the-fact releases by orphan reconciliation, counted by `cleanup proven`); both are
 * schema-checked and scanned. Anything else unlisted fails.
 * `ok` = every check ok. `shareSafety`: any failed check → `blocked` (`VERIFY_FAILED`), scan
 * findings → `blocked` (`PUBLIC_SAFETY_FINDINGS`); otherwise raw screenshots (`RAW_SCREENSHOTS`)
 * or non-text non-screenshot files (`UNSCANNED_ARTIFACT`) → `local_only`; else `share_ready`.
 */

import type { Stats } from "node:fs";
import { lstat, readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { z } from "zod";
import { findActor } from "../actors/registry.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { buildNoSpendProof, deriveVerdict, round6, tallyParticipants, taskFunnel } from "./derive.ts";
import { artifactRootFor, DERIVED_FILES, isSafeRunSegment, ORPHAN_RELEASE_FILE, RUN_FILE, safeRelPath } from "./paths.ts";
import { admitPngBytes } from "./png.ts";
import { decodeBase64Payload, findSensitive, percentDecodeRuns, pngNonImageChunks, splitPngDataUris } from "./redact.ts";
import {
  type ActorTrace,
  ActorTraceSchema,
  type CleanupProof,
  type CostLine,
  OrphanReleaseSchema,
  type RunBundle,
  RunBundleSchema,
  RunStatusSchema,
  type SandboxReceipt,
  SandboxReceiptSchema,
  TERMINAL_COST_CATEGORIES,
  TerminalEventSchema,
  type TerminalLedgers,
  TerminalLedgersSchema,
  type VerifyCheck,
  type VerifyResult,
} from "./schemas.ts";

/** Path segments that must never appear in a bundle (browser profiles, VCS metadata). */
const RISKY_SEGMENTS = new Set([".git", "Cookies", "Login Data", "Local Storage", "Preferences", "Secure Preferences", "profiles"]);
/** Bounds (bytes / counts) so a hostile directory cannot exhaust memory. */
export const VERIFY_LIMITS = { maxFiles: 20_000, maxFileBytes: 64 * 1024 * 1024, maxTotalBytes: 1024 * 1024 * 1024, maxFindings: 50, maxDepth: 16 } as const;
/** Grace beyond `maxMinutes` for the deadline kill to land (ms). */
export const DEADLINE_GRACE_MS = 60_000;

interface FileEntry {
  rel: string;
  kind: "file" | "dir" | "symlink" | "other";
  size: number;
  nlink: number;
}

function zodMsg(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}

async function walk(root: string): Promise<{ entries: FileEntry[]; truncated: boolean }> {
  const entries: FileEntry[] = [];
  let truncated = false;
  const visit = async (relDir: string, depth: number): Promise<void> => {
    if (depth > VERIFY_LIMITS.maxDepth) {
      truncated = true;
      return;
    }
    const names = (await readdir(relDir ? join(root, relDir) : root)).sort();
    for (const name of names) {
      if (entries.length >= VERIFY_LIMITS.maxFiles) {
        truncated = true;
        return;
      }
      const rel = relDir ? `${relDir}/${name}` : name;
      const st = await lstat(join(root, rel));
      const kind = st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
      entries.push({ rel, kind, size: st.size, nlink: st.nlink });
      if (kind === "dir") await visit(rel, depth + 1);
    }
  };
  await visit("", 0);
  return { entries, truncated };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** Decoded text per byte array (each file is decoded once per verify). */
const textCache = new WeakMap<Uint8Array, string | null>();
function decodeText(bytes: Uint8Array): string | null {
  if (textCache.has(bytes)) return textCache.get(bytes)!;
  const t = decodeTextUncached(bytes);
  textCache.set(bytes, t);
  return t;
}
function decodeTextUncached(bytes: Uint8Array): string | null {
  try {
    const s = utf8.decode(bytes);
    // Text = strict UTF-8 without control bytes other than tab/newline/CR (ESC allowed for ANSI transcripts).
    return /[\u0000-\u0008\u000b\u000c\u000e-\u001a\u001c-\u001f\u007f]/.test(s) ? null : s;
  } catch {
    return null;
  }
}

function isPngName(rel: string): boolean {
  return rel.toLowerCase().endsWith(".png");
}

/**
 * Every string (keys included) inside a JSON value. Iterative, so a hostile nesting depth
 * (JSON.parse accepts far deeper input than the call stack allows) cannot crash verify.
 */
function jsonStrings(root: unknown, out: string[]): void {
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (v && typeof v === "object") {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push(entries[i]![1]);
        stack.push(entries[i]![0]);
      }
    }
  }
}

/** Latin1 view of bytes (every byte one char), for pattern scans of binary content. */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/**
 * Scan one file's content; returns the shape names found. Text is scanned as text, and JSON is
 * scanned raw AND decoded; embedded PNG data-URI payloads are scanned as PNGs (their non-image
 * chunks), never as text; a binary PNG is scanned through its non-image chunks; any other binary
 * is scanned through a latin1 view.
 */
function scanContent(rel: string, bytes: Uint8Array): string[] {
  const found = new Set<string>();
  const scan = (s: string) => {
    for (const f of findSensitive(s, 10)) found.add(f.shape);
  };
  const scanBinary = (b: Uint8Array) => {
    const chunks = pngNonImageChunks(b);
    if (chunks) for (const c of chunks) scan(latin1(c));
    else scan(latin1(b));
  };
  const text = decodeText(bytes);
  if (text === null) {
    scanBinary(bytes);
    return [...found];
  }
  const { outside, payloads } = splitPngDataUris(text);
  const bare = outside.join("\n");
  scan(bare);
  for (const p of payloads) scanBinary(decodeBase64Payload(p));
  const lower = rel.toLowerCase();
  const docs: unknown[] = [];
  if (lower.endsWith(".json")) {
    try {
      docs.push(JSON.parse(text));
    } catch {
      /* shape checks report malformed JSON */
    }
  } else if (lower.endsWith(".ndjson")) {
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        docs.push(JSON.parse(line));
      } catch {
        /* reported by artifact schemas */
      }
    }
  }
  const strings: string[] = [];
  for (const d of docs) jsonStrings(d, strings);
  for (const s of strings) scan(splitPngDataUris(s).outside.join("\n"));
  // HTML character references (a report escapes what it shows) are decoded once more.
  const lowerRel = rel.toLowerCase();
  if ((lowerRel.endsWith(".html") || lowerRel.endsWith(".htm")) && /&(?:#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|sol);/i.test(bare)) scan(decodeHtmlRefs(bare));
  // Percent-encoded content (URLs in transcripts) is decoded once more.
  if (/%[0-9A-Fa-f]{2}/.test(bare)) scan(percentDecodeRuns(bare));
  return [...found];
}

/** Decode numeric and the common named HTML character references. */
function decodeHtmlRefs(s: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", sol: "/" };
  return s.replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|sol);/gi, (_, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return named[ref.toLowerCase()] ?? "";
  });
}

function labelOk(l: { usd: number | null; ratesAsOf: string | null; source: string | null; reason: string | null }): string | null {
  if (l.usd !== null) {
    if (!l.ratesAsOf) return "has a number but no ratesAsOf";
    if (!l.source) return "has a number but no source";
    return null;
  }
  if (!l.reason) return "is null without a reason";
  if (l.ratesAsOf !== null) return "is null but carries a ratesAsOf";
  return null;
}

function parseNdjson<T>(text: string, schema: z.ZodType<T>): { records: T[]; error: string | null } {
  const records: T[] = [];
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    let v: unknown;
    try {
      v = JSON.parse(lines[i]!);
    } catch {
      return { records, error: `line ${i + 1} is not JSON` };
    }
    const r = schema.safeParse(v);
    if (!r.success) return { records, error: `line ${i + 1}: ${zodMsg(r.error)}` };
    records.push(r.data);
  }
  return { records, error: null };
}

function finish(
  run: string,
  checks: VerifyCheck[],
  extra: { scanFindings: number; raw: boolean; unscanned: string[]; warnings: string[]; error?: VerifyResult["error"] },
): VerifyResult {
  const ok = checks.length > 0 && checks.every((c) => c.ok) && !extra.error;
  const reasons: VerifyResult["shareSafety"]["reasons"] = [];
  const failed = checks.filter((c) => !c.ok);
  if (!ok)
    reasons.push({
      code: "VERIFY_FAILED",
      message: failed.length ? `failed: ${failed.map((c) => c.name).join(", ")}` : (extra.error?.message ?? "nothing verified"),
    });
  if (extra.scanFindings > 0) reasons.push({ code: "PUBLIC_SAFETY_FINDINGS", message: `${extra.scanFindings} secret or local-path finding(s)` });
  if (extra.raw) reasons.push({ code: "RAW_SCREENSHOTS", message: "screenshots are raw frames of the participant's screen" });
  if (extra.unscanned.length) reasons.push({ code: "UNSCANNED_ARTIFACT", message: `non-text files not scanned: ${extra.unscanned.slice(0, 10).join(", ")}` });
  const blocked = reasons.some((r) => r.code === "VERIFY_FAILED" || r.code === "PUBLIC_SAFETY_FINDINGS");
  const status = blocked ? "blocked" : reasons.length ? "local_only" : "share_ready";
  return {
    schema: "humanish.verify-result.v1",
    ok,
    cwd: "[target-cwd]",
    run,
    ...(isSafeRunSegment(run) ? { bundlePath: artifactRootFor(run) } : {}),
    checks,
    shareSafety: { status, reasons },
    warnings: extra.warnings,
    ...(extra.error ? { error: extra.error } : {}),
  };
}

/**
 * Verify the run directory `runDir` fail-closed. Never throws for bundle content: every
 * problem becomes a failed check. A missing directory yields `error.code HUMANISH_RUN_NOT_FOUND`
 * with no checks; a symlinked/non-directory run dir yields one failed
 * `run storage containment` check and `HUMANISH_INVALID_RUN_BUNDLE`.
 */
export async function verifyRun(runDir: string): Promise<VerifyResult> {
  const run = basename(runDir);
  const none = { scanFindings: 0, raw: false, unscanned: [] as string[], warnings: [] as string[] };
  let rootStat: Stats;
  try {
    rootStat = await lstat(runDir);
  } catch {
    return finish(run, [], { ...none, error: { code: "HUMANISH_RUN_NOT_FOUND", message: `run directory ${run} does not exist` } });
  }
  if (rootStat.isSymbolicLink() || !rootStat.isDirectory()) {
    return finish(run, [{ name: "run storage containment", ok: false, message: `${run} is not a real directory (symlink or file)` }], {
      ...none,
      error: { code: "HUMANISH_INVALID_RUN_BUNDLE", message: `run storage for ${run} fails containment` },
    });
  }

  const checks: VerifyCheck[] = [];
  const add = (name: string, problems: string[], okMessage: string) => {
    checks.push({
      name,
      ok: problems.length === 0,
      message: problems.length ? problems.slice(0, 12).join("; ") + (problems.length > 12 ? ` (+${problems.length - 12} more)` : "") : okMessage,
    });
  };
  const warnings: string[] = [];

  // Walk and read everything regular (bounded). An unreadable entry is a containment finding.
  const containment: string[] = [];
  let entries: FileEntry[] = [];
  let truncated = false;
  try {
    ({ entries, truncated } = await walk(runDir));
  } catch (e) {
    containment.push(`run directory could not be walked: ${(e as NodeJS.ErrnoException).code ?? "error"}`);
  }
  const files = new Map<string, Uint8Array>();
  if (truncated) containment.push(`directory exceeds ${VERIFY_LIMITS.maxFiles} entries or depth ${VERIFY_LIMITS.maxDepth}`);
  let total = 0;
  for (const e of entries) {
    const segs = e.rel.split("/");
    if (segs.some((s) => RISKY_SEGMENTS.has(s))) containment.push(`${e.rel}: risky path segment`);
    if (e.kind === "symlink") containment.push(`${e.rel}: symlink`);
    else if (e.kind === "other") containment.push(`${e.rel}: not a regular file`);
    else if (e.kind === "file") {
      if (e.nlink > 1) containment.push(`${e.rel}: hard-linked (${e.nlink} links)`);
      if (e.size > VERIFY_LIMITS.maxFileBytes) {
        containment.push(`${e.rel}: ${e.size} bytes exceeds ${VERIFY_LIMITS.maxFileBytes}`);
        continue;
      }
      total += e.size;
      if (total > VERIFY_LIMITS.maxTotalBytes) {
        containment.push(`run directory exceeds ${VERIFY_LIMITS.maxTotalBytes} bytes`);
        break;
      }
      try {
        files.set(e.rel, new Uint8Array(await readFile(join(runDir, e.rel))));
      } catch (err) {
        containment.push(`${e.rel}: unreadable (${(err as NodeJS.ErrnoException).code ?? "error"})`);
      }
    }
  }

  // 1–3: run.json.
  let bundle: RunBundle | null = null;
  let rawBundle: unknown;
  const runBytes = files.get(RUN_FILE);
  if (!runBytes) {
    add("run.json exists", ["run.json is missing"], "");
  } else {
    try {
      rawBundle = JSON.parse(new TextDecoder().decode(runBytes));
      add("run.json exists", [], "run.json is readable JSON");
    } catch {
      add("run.json exists", ["run.json is not valid JSON"], "");
    }
  }
  const schemaId = rawBundle && typeof rawBundle === "object" ? (rawBundle as { schema?: unknown }).schema : undefined;
  add(
    "run schema",
    schemaId === "humanish.run-bundle.v1" ? [] : [`schema is ${JSON.stringify(schemaId ?? null)}, expected humanish.run-bundle.v1`],
    "humanish.run-bundle.v1",
  );
  {
    const problems: string[] = [];
    if (rawBundle !== undefined) {
      const r = RunBundleSchema.safeParse(rawBundle);
      if (!r.success) problems.push(zodMsg(r.error));
      else bundle = r.data;
    } else problems.push("no bundle to check");
    if (bundle) {
      const b = bundle;
      if (b.runId !== run) problems.push(`runId ${b.runId} does not match directory ${run}`);
      if (b.artifactRoot !== artifactRootFor(b.runId)) problems.push(`artifactRoot must be ${artifactRootFor(b.runId)}`);
      const dur = Date.parse(b.completedAt) - Date.parse(b.createdAt);
      if (dur < 0) problems.push("completedAt is before createdAt");
      else if (dur !== b.durationMs) problems.push(`durationMs ${b.durationMs} != completedAt - createdAt (${dur})`);
      const ref = b.lab.source.ref;
      if (ref.startsWith("/") || ref.split("/").includes(".."))
        problems.push(`lab.source.ref ${JSON.stringify(ref)} must be embedded:<id> or a project-relative path`);
      const ids = new Set<string>();
      for (const p of b.participants) {
        if (ids.has(p.id)) problems.push(`participant id ${p.id} is duplicated`);
        ids.add(p.id);
        if (b.mode === "dry-run" && p.status !== "contract_proof_only") problems.push(`dry run participant ${p.id} has status ${p.status}`);
        if (b.mode === "live" && p.status === "contract_proof_only") problems.push(`live participant ${p.id} claims contract_proof_only`);
      }
      for (const t of b.tasks) {
        if (t.passed !== (t.status === "passed")) problems.push(`task ${t.id}: passed=${t.passed} contradicts status ${t.status}`);
        if (t.participantId && !ids.has(t.participantId)) problems.push(`task ${t.id} names unknown participant ${t.participantId}`);
      }
      const tally = tallyParticipants(b.participants);
      if (JSON.stringify(tally) !== JSON.stringify(b.review.participants)) problems.push("review.participants does not match the participants' statuses");
      const funnel = taskFunnel(b.tasks, b.participants.length);
      if (JSON.stringify(funnel) !== JSON.stringify(b.review.tasks)) problems.push("review.tasks does not match the task results");
      if (b.mode === "dry-run" && b.review.verdict !== "contract_proof_only")
        problems.push(`dry run verdict must be contract_proof_only, got ${b.review.verdict}`);
      if (b.mode === "live" && b.review.verdict === "contract_proof_only") problems.push("live run claims verdict contract_proof_only");
      if (b.outcome.state === "completed" && b.outcome.error) problems.push("outcome completed but carries an error");
      if (b.outcome.state === "failed" && !b.outcome.error) problems.push("outcome failed without an error code");
      if (b.outcome.state !== "interrupted" && b.outcome.interrupted) problems.push("outcome names a signal but is not interrupted");
      const paths = new Set<string>();
      for (const a of b.artifacts) {
        if (paths.has(a.path)) problems.push(`artifact ${a.path} listed twice`);
        paths.add(a.path);
        if (safeRelPath(a.path) !== a.path) problems.push(`artifact path ${JSON.stringify(a.path)} is not a safe local relative path`);
        if (a.path === RUN_FILE || DERIVED_FILES.includes(a.path)) problems.push(`${a.path} must not be listed as an artifact`);
        if (a.kind === "screenshot" && !/^screenshots\/.+\.png$/.test(a.path)) problems.push(`screenshot ${a.path} must be screenshots/….png`);
        if (a.kind === "report" && a.path !== "report/index.html") problems.push(`report artifact must be report/index.html, got ${a.path}`);
      }
      for (const p of b.participants) {
        if (p.trace === null) continue;
        const a = b.artifacts.find((x) => x.path === p.trace);
        if (!a) problems.push(`participant ${p.id} trace ${p.trace} is not a listed artifact`);
        else if (a.kind !== "actor-trace") problems.push(`participant ${p.id} trace ${p.trace} is listed as ${a.kind}`);
      }
    }
    add("run bundle shape", problems, "run.json matches humanish.run-bundle.v1 and is internally consistent");
  }
  const b = bundle;

  // 4: redaction.
  add("redaction passed", b ? (b.redaction.status === "passed" ? [] : ["redaction.status is not passed"]) : ["no valid bundle"], "redaction.status passed");

  // 5: containment.
  add("storage containment", containment, "no symlinks, hard links, special files or risky segments");

  // 6: artifacts intact.
  {
    const problems: string[] = [];
    if (!b) problems.push("no valid bundle to check artifacts against");
    else
      for (const a of b.artifacts) {
        const bytes = files.get(a.path);
        if (!bytes) {
          problems.push(`${a.path}: missing`);
          continue;
        }
        if (bytes.byteLength !== a.bytes) problems.push(`${a.path}: ${bytes.byteLength} bytes, listed ${a.bytes}`);
        else if (sha256Hex(bytes) !== a.sha256) problems.push(`${a.path}: SHA-256 differs from the listed digest`);
      }
    add("artifacts intact", problems, b ? `${b.artifacts.length} listed artifact(s) present with matching size and SHA-256` : "");
  }

  // 7: no unlisted files.
  {
    const listed = new Set(b ? b.artifacts.map((a) => a.path) : []);
    const problems: string[] = [];
    if (!b) problems.push("no valid bundle to list files against");
    for (const e of entries) {
      if (e.kind === "dir") continue;
      if (e.rel === RUN_FILE || DERIVED_FILES.includes(e.rel)) continue;
      if (!listed.has(e.rel)) problems.push(`${e.rel}: not listed in run.json`);
    }
    add("no unlisted files", problems, `every file is listed (${DERIVED_FILES.join(", ")} are derived and exempt)`);
  }

  // 8: public-safety scan (names and contents of every file, listed or not).
  let scanFindings = 0;
  {
    const problems: string[] = [];
    for (const e of entries) {
      for (const f of findSensitive(e.rel, 5)) problems.push(`${e.rel}: path matches ${f.shape}`);
    }
    for (const [rel, bytes] of files) {
      for (const shape of scanContent(rel, bytes)) problems.push(`${rel}: contains a ${shape} shape`);
      if (problems.length >= VERIFY_LIMITS.maxFindings) break;
    }
    scanFindings = problems.length;
    add("public-safety scan", problems.slice(0, VERIFY_LIMITS.maxFindings), "no secret or local-path shapes in any file name or content");
  }

  // 9: artifact schemas (and status.json).
  const traces = new Map<string, ActorTrace>();
  let ledgers: TerminalLedgers | null = null;
  const receipts: SandboxReceipt[] = [];
  const orphanReleases: CleanupProof[] = [];
  {
    const problems: string[] = [];
    const statusBytes = files.get("status.json");
    if (statusBytes) {
      try {
        const s = RunStatusSchema.safeParse(JSON.parse(new TextDecoder().decode(statusBytes)));
        if (!s.success) problems.push(`status.json: ${zodMsg(s.error)}`);
        else if (s.data.runId !== run) problems.push(`status.json names run ${s.data.runId}`);
        else if (s.data.state === "running") warnings.push("status.json says the run is still running (or its process died before finishing)");
      } catch {
        problems.push("status.json is not JSON");
      }
    }
    const orphanBytes = files.get(ORPHAN_RELEASE_FILE);
    if (orphanBytes) {
      try {
        const o = OrphanReleaseSchema.safeParse(JSON.parse(new TextDecoder().decode(orphanBytes)));
        if (!o.success) problems.push(`${ORPHAN_RELEASE_FILE}: ${zodMsg(o.error)}`);
        else if (o.data.runId !== run) problems.push(`${ORPHAN_RELEASE_FILE} names run ${o.data.runId}`);
        else orphanReleases.push(...o.data.releases);
      } catch {
        problems.push(`${ORPHAN_RELEASE_FILE} is not JSON`);
      }
    }
    if (b) {
      for (const a of b.artifacts) {
        const bytes = files.get(a.path);
        if (!bytes) continue;
        const text = a.kind === "screenshot" ? null : decodeText(bytes);
        if (a.kind !== "screenshot" && a.kind !== "data" && text === null) {
          problems.push(`${a.path}: ${a.kind} artifact is not UTF-8 text`);
          continue;
        }
        if (a.kind === "actor-trace") {
          try {
            const r = ActorTraceSchema.safeParse(JSON.parse(text!));
            if (!r.success) problems.push(`${a.path}: ${zodMsg(r.error)}`);
            else {
              traces.set(a.path, r.data);
              const owner = b.participants.find((p) => p.trace === a.path);
              if (!owner) problems.push(`${a.path}: no participant references this trace`);
              else if (owner.id !== r.data.participantId) problems.push(`${a.path}: participantId ${r.data.participantId} != ${owner.id}`);
              else if (owner.status !== r.data.status) problems.push(`${a.path}: trace status ${r.data.status} != participant status ${owner.status}`);
            }
          } catch {
            problems.push(`${a.path}: not JSON`);
          }
        } else if (a.kind === "terminal-ledgers") {
          try {
            const r = TerminalLedgersSchema.safeParse(JSON.parse(text!));
            if (!r.success) problems.push(`${a.path}: ${zodMsg(r.error)}`);
            else if (ledgers) problems.push(`${a.path}: a second terminal-ledgers artifact`);
            else ledgers = r.data;
          } catch {
            problems.push(`${a.path}: not JSON`);
          }
        } else if (a.kind === "terminal-events") {
          const r = parseNdjson(text!, TerminalEventSchema);
          if (r.error) problems.push(`${a.path}: ${r.error}`);
        } else if (a.kind === "sandbox-receipts") {
          const r = parseNdjson(text!, SandboxReceiptSchema);
          if (r.error) problems.push(`${a.path}: ${r.error}`);
          receipts.push(...r.records);
        } else if (a.kind === "events") {
          const lines = text!.split("\n").filter((l) => l.trim());
          lines.forEach((l, i) => {
            try {
              const v = JSON.parse(l);
              if (!v || typeof v !== "object" || Array.isArray(v)) problems.push(`${a.path}: line ${i + 1} is not an object`);
            } catch {
              problems.push(`${a.path}: line ${i + 1} is not JSON`);
            }
          });
        } else if (a.kind === "report") {
          if (!/^\s*<!doctype html/i.test(text!)) problems.push(`${a.path}: report is not an HTML document`);
        }
      }
    }
    add("artifact schemas", problems, `status and ${traces.size} trace(s)${ledgers ? ", ledgers" : ""} match their schemas`);
  }

  // 10: screenshots admitted (every PNG in the dir, every listed screenshot, every screenshotRef).
  let raw = false;
  const unscanned: string[] = [];
  {
    const problems: string[] = [];
    const shotPaths = new Set(b ? b.artifacts.filter((a) => a.kind === "screenshot").map((a) => a.path) : []);
    const pngs = new Set<string>([...shotPaths]);
    for (const rel of files.keys()) if (isPngName(rel)) pngs.add(rel);
    // Identical bytes are admitted once (a report inlines the same frames it lists).
    const admitted = new Map<string, Awaited<ReturnType<typeof admitPngBytes>>>();
    const admitOnce = async (bytes: Uint8Array) => {
      const key = sha256Hex(bytes);
      let r = admitted.get(key);
      if (!r) {
        r = await admitPngBytes(bytes);
        admitted.set(key, r);
      }
      return r;
    };
    for (const rel of [...pngs].sort()) {
      const bytes = files.get(rel);
      if (!bytes) continue; // missing: reported by artifacts intact
      const adm = await admitOnce(bytes);
      if (!adm.ok) problems.push(`${rel}: not admitted as PNG (${adm.code}: ${adm.detail})`);
    }
    let embedded = 0;
    for (const [rel, bytes] of files) {
      if (isPngName(rel)) continue;
      const text = decodeText(bytes);
      if (text === null || !text.includes("data:image/png;base64,")) continue;
      const { payloads } = splitPngDataUris(text);
      for (let i = 0; i < payloads.length; i++) {
        embedded++;
        const adm = await admitOnce(decodeBase64Payload(payloads[i]!));
        if (!adm.ok) problems.push(`${rel}: embedded PNG #${i + 1} not admitted (${adm.code}: ${adm.detail})`);
      }
      if (payloads.length) raw = true;
    }
    for (const [path, t] of traces) {
      for (const it of t.items) {
        if (it.screenshotRef) {
          if (!shotPaths.has(it.screenshotRef.path)) problems.push(`${path} item ${it.id}: screenshotRef ${it.screenshotRef.path} is not a listed screenshot`);
          if (it.screenshotRef.redaction === "none") raw = true;
        }
      }
      if (t.redaction.screenshots === "raw") raw = true;
      if (shotPaths.size > 0 && t.redaction.screenshots === "n/a" && t.items.some((i) => i.screenshotRef))
        problems.push(`${path}: references screenshots but declares screenshots n/a`);
    }
    if (shotPaths.size > 0)
      raw = raw || traces.size === 0 || [...traces.values()].some((t) => t.redaction.screenshots !== "blurred" && t.redaction.screenshots !== "ocr_scrubbed");
    for (const [rel, bytes] of files) {
      if (rel === RUN_FILE || shotPaths.has(rel)) continue;
      if (decodeText(bytes) === null) unscanned.push(rel);
    }
    add("screenshots admitted", problems, `${pngs.size} PNG file(s)${embedded ? ` and ${embedded} embedded PNG(s)` : ""} admitted`);
  }

  // 11: terminal-product evidence (live terminal only).
  {
    const problems: string[] = [];
    let msg = "not a terminal run";
    if (b && b.route === "terminal") {
      if (b.mode === "dry-run") msg = "dry run: contract only, exempt";
      else {
        msg = "ledgers, events, transcript and traces complete";
        const kinds = (k: string) => b.artifacts.filter((a) => a.kind === k);
        const L: TerminalLedgers | null = ledgers;
        if (!kinds("terminal-ledgers").some((a) => a.path === "terminal-ledgers.json")) problems.push("terminal-ledgers.json is not listed");
        if (!L) problems.push("terminal ledgers missing or not humanish.terminal-ledgers.v1");
        else {
          if (L.lifecycle.length === 0) problems.push("ledger lifecycle is empty");
          for (const c of TERMINAL_COST_CATEGORIES) if (!(c in L.cost.lines)) problems.push(`cost line ${c} missing`);
          const vals = TERMINAL_COST_CATEGORIES.map((c) => L.cost.lines[c].usd);
          const known = round6(vals.reduce<number>((a, v) => a + (v ?? 0), 0));
          if (known !== L.cost.knownTotalUsd) problems.push(`cost knownTotalUsd ${L.cost.knownTotalUsd} != sum of known lines ${known}`);
          if (L.cost.fullyMeasured !== vals.every((v) => v !== null)) problems.push("cost fullyMeasured contradicts its lines");
          const expect = buildNoSpendProof(L.cost, L.noSpendProof.maxUsd);
          const p = L.noSpendProof;
          for (const c of p.knownZeroLines)
            if (L.cost.lines[c].usd === null) problems.push(`no-spend proof lists ${c} as known zero but the ledger marks it unmeasured`);
          if (JSON.stringify([...p.knownZeroLines].sort()) !== JSON.stringify([...expect.knownZeroLines].sort()))
            problems.push("no-spend proof knownZeroLines contradict the ledger");
          if (JSON.stringify([...p.knownNonZeroLines].sort()) !== JSON.stringify([...expect.knownNonZeroLines].sort()))
            problems.push("no-spend proof knownNonZeroLines contradict the ledger");
          if (JSON.stringify([...p.unmeasuredLines].sort()) !== JSON.stringify([...expect.unmeasuredLines].sort()))
            problems.push("no-spend proof unmeasuredLines contradict the ledger");
          if (p.knownTotalUsd !== L.cost.knownTotalUsd) problems.push("no-spend proof knownTotalUsd differs from the ledger");
          if (p.satisfied && p.knownNonZeroLines.length > 0) problems.push("no-spend proof satisfied with known non-zero lines");
          if (p.satisfied !== expect.satisfied) problems.push("no-spend proof satisfied contradicts the ledger");
          if (p.maxUsd !== null && L.cost.knownTotalUsd > p.maxUsd) problems.push(`known spend ${L.cost.knownTotalUsd} exceeds proof maxUsd ${p.maxUsd}`);
          if (p.maxUsd !== b.caps.maxUsd) problems.push(`no-spend proof maxUsd ${p.maxUsd} != caps.maxUsd ${b.caps.maxUsd}`);
          const a = JSON.stringify([...L.cleanup].map((c) => `${c.id}:${c.outcome}`).sort());
          const bb = JSON.stringify([...b.cleanup].map((c) => `${c.id}:${c.outcome}`).sort());
          if (a !== bb) problems.push("ledger cleanup differs from run.json cleanup");
          if (L.interventions.length > 0) problems.push(`${L.interventions.length} stdin intervention(s) recorded; participants run with stdin closed`);
        }
        if (!kinds("terminal-events").some((a) => a.path === "terminal-events.ndjson")) problems.push("terminal-events.ndjson is not listed");
        if (!kinds("terminal-transcript").some((a) => a.path === "terminal-transcript.txt")) problems.push("terminal-transcript.txt is not listed");
        for (const p of b.participants) {
          if (p.trace === null) {
            if (p.status !== "failed") problems.push(`participant ${p.id} has no trace`);
            continue;
          }
          const t = traces.get(p.trace);
          if (!t) problems.push(`participant ${p.id}: trace ${p.trace} missing or invalid`);
          else if (t.lane !== "terminal") problems.push(`participant ${p.id}: trace lane ${t.lane}, expected terminal`);
        }
      }
    } else if (b && b.route === "browser") msg = "browser run: terminal evidence not applicable";
    add("terminal-product evidence", b ? problems : ["no valid bundle"], msg);
  }

  // 11b: browser evidence (live browser only).
  {
    const problems: string[] = [];
    let msg = "not a browser run";
    if (b && b.route === "browser") {
      if (b.mode === "dry-run") msg = "dry run: contract only, exempt";
      else {
        msg = "traces, geometry and screenshots present";
        for (const p of b.participants) {
          if (p.trace === null) {
            if (p.status !== "failed") problems.push(`participant ${p.id} has no trace`);
            continue;
          }
          const t = traces.get(p.trace);
          if (!t) {
            problems.push(`participant ${p.id}: trace ${p.trace} missing or invalid`);
            continue;
          }
          if (t.lane !== "scripted-browser" && t.lane !== "computer-use")
            problems.push(`participant ${p.id}: trace lane ${t.lane}, expected scripted-browser or computer-use`);
          if (!p.desktopGeometry) problems.push(`participant ${p.id}: no desktop geometry recorded`);
          if (p.status === "passed" && !t.items.some((i) => i.screenshotRef)) problems.push(`participant ${p.id} passed without a single screenshot`);
        }
      }
    }
    add("browser evidence", b ? problems : ["no valid bundle"], msg);
  }

  // 12: cleanup proven.
  {
    const problems: string[] = [];
    let msg = "";
    if (!b) problems.push("no valid bundle");
    else if (b.mode === "dry-run") {
      if (b.cleanup.length) problems.push(`dry run records ${b.cleanup.length} resource(s); a dry run creates none`);
      if (receipts.length) problems.push("dry run has sandbox receipts; a dry run creates no resources");
      msg = "dry run: no resources created";
    } else {
      // A release made later by orphan reconciliation (by the same exact id) also proves cleanup.
      const later = new Set(orphanReleases.filter((c) => c.outcome === "released").map((c) => c.id));
      let reclaimed = 0;
      for (const c of b.cleanup) {
        if (c.outcome === "released") continue;
        if (later.has(c.id)) {
          reclaimed++;
          continue;
        }
        if (c.outcome === "retained") problems.push(`${c.provider} ${c.id} was retained (${c.reason}); release it by id`);
        else problems.push(`${c.provider} ${c.id} release unconfirmed (${c.reason})`);
      }
      const proven = new Set([...b.cleanup.filter((c) => c.outcome === "released").map((c) => c.id), ...later]);
      for (const r of receipts) if (!proven.has(r.id)) problems.push(`${r.provider} ${r.id} has a receipt but no released proof`);
      const ran = b.participants.some((p) => p.trace !== null);
      if (ran && b.cleanup.length === 0) problems.push("participants ran but no resource release is recorded");
      msg = b.cleanup.length
        ? `${b.cleanup.length} resource(s) released and confirmed gone${reclaimed ? ` (${reclaimed} by later orphan reconciliation)` : ""}`
        : "no resource was created";
    }
    add("cleanup proven", problems, msg);
  }

  // 13: caps respected.
  {
    const problems: string[] = [];
    if (!b) problems.push("no valid bundle");
    else {
      const c = b.caps;
      if (b.mode === "live" && b.route === "terminal" && b.outcome.state === "completed") {
        if (c.maxUsd === null) problems.push("live terminal run without caps.maxUsd");
        if (c.maxMinutes === null || c.maxMinutes <= 0) problems.push("live terminal run without a positive caps.maxMinutes");
      }
      if (c.maxUsd !== null) {
        if (b.cost.estimatedTotalUsd !== null && b.cost.estimatedTotalUsd > c.maxUsd)
          problems.push(`estimated cost ${b.cost.estimatedTotalUsd} USD exceeds maxUsd ${c.maxUsd}`);
        const L: TerminalLedgers | null = ledgers;
        if (L && L.cost.knownTotalUsd > c.maxUsd) problems.push(`known terminal spend ${L.cost.knownTotalUsd} USD exceeds maxUsd ${c.maxUsd}`);
      }
      // maxJobs counts billable jobs (reference contracts.md §1.6): participants whose actor calls
      // a model. A scripted participant is no job; an unknown actor type counts, fail-closed.
      const billable = b.participants.filter((p) => findActor(p.actorType)?.capabilities.byoModel !== false).length;
      if (c.maxJobs !== null && billable > c.maxJobs) problems.push(`${billable} billable participant job(s) exceed maxJobs ${c.maxJobs}`);
      if (c.maxMinutes !== null && c.maxMinutes > 0) {
        const limit = c.maxMinutes * 60_000 + DEADLINE_GRACE_MS;
        for (const p of b.participants)
          if (p.durationMs !== undefined && p.durationMs > limit)
            problems.push(`participant ${p.id} ran ${p.durationMs} ms, over maxMinutes ${c.maxMinutes} (+${DEADLINE_GRACE_MS} ms grace)`);
        for (const t of traces.values())
          if (t.durationMs > limit) problems.push(`trace of ${t.participantId} ran ${t.durationMs} ms, over maxMinutes ${c.maxMinutes}`);
      }
    }
    add(
      "caps respected",
      problems,
      b ? `caps maxUsd=${b.caps.maxUsd ?? "none"} maxJobs=${b.caps.maxJobs ?? "none"} maxMinutes=${b.caps.maxMinutes ?? "none"} respected` : "",
    );
  }

  // 14: cost labeling.
  {
    const problems: string[] = [];
    if (!b) problems.push("no valid bundle");
    else {
      const lines: [string, CostLine][] = b.cost.lines.map((l, i) => [`cost.lines[${i}]`, l]);
      const L: TerminalLedgers | null = ledgers;
      if (L) for (const c of TERMINAL_COST_CATEGORIES) lines.push([`terminal-ledgers cost.${c}`, L.cost.lines[c]]);
      for (const [where, l] of lines) {
        const bad = labelOk(l);
        if (bad) problems.push(`${where} ${bad}`);
      }
      for (const [path, t] of traces) {
        if (t.estimatedCost) {
          const e = t.estimatedCost;
          const bad = labelOk({ usd: e.estimatedCostUsd, ratesAsOf: e.ratesAsOf, source: e.source, reason: e.reason });
          if (bad) problems.push(`${path} estimatedCost ${bad}`);
        }
      }
      const known = b.cost.lines.filter((l) => l.usd !== null);
      const expectTotal = known.length ? round6(known.reduce((a, l) => a + (l.usd ?? 0), 0)) : null;
      if (expectTotal !== b.cost.estimatedTotalUsd)
        problems.push(`cost.estimatedTotalUsd ${b.cost.estimatedTotalUsd} != rounded sum of known lines ${expectTotal}`);
      const dates = known
        .map((l) => l.ratesAsOf)
        .filter((d): d is string => !!d)
        .sort();
      if ((dates[0] ?? null) !== b.cost.ratesAsOf) problems.push(`cost.ratesAsOf ${b.cost.ratesAsOf} != oldest contributing date ${dates[0] ?? null}`);
    }
    add("cost labeling", problems, "every cost line is dated and sourced, or null with a reason");
  }

  // 15: actor engagement.
  {
    const problems: string[] = [];
    if (b && b.mode === "live") {
      for (const [path, t] of traces) {
        if (t.completionReason !== "goal_satisfied") continue;
        const acted = t.items.some((i) => i.kind === "command" || i.kind === "ui_action" || i.kind === "message" || i.kind === "tool_call");
        const counted = (t.counts.actions ?? 0) + (t.counts.commands ?? 0) + (t.counts.messages ?? 0) > 0;
        if (!acted && !counted) problems.push(`${path}: claims goal_satisfied with zero actions and zero messages`);
      }
    }
    add("actor engagement", problems, "no participant claims success without acting");
  }

  // 16: verdict consistency.
  {
    const problems: string[] = [];
    if (!b) problems.push("no valid bundle");
    else {
      const expect = deriveVerdict(b.mode, b.outcome, b.participants);
      if (b.review.verdict === "pass" && expect !== "pass") problems.push(`verdict pass but participants/outcome give ${expect}`);
      if (b.mode === "live" && b.review.verdict === "pass") {
        for (const t of traces.values()) if (t.status !== "passed") problems.push(`verdict pass but ${t.participantId} trace is ${t.status}`);
      }
    }
    add("verdict consistency", problems, b ? `verdict ${b.review.verdict}` : "");
  }

  // Warnings (never flip ok).
  if (raw) warnings.push("screenshots are raw frames: keep this run local (share safety local_only)");
  if (b) {
    const geo = new Set<string>();
    for (const p of b.participants) for (const w of p.desktopGeometry?.warnings ?? []) geo.add(w);
    warnings.push(...geo);
  }

  return finish(run, checks, { scanFindings, raw, unscanned, warnings });
}
