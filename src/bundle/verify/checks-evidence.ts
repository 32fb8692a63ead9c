/**
 * Checks of the evidence inside the files: artifact schemas (and the status index and the
 * orphan-release appendix), screenshot admission, and the per-route evidence a live run owes.
 */

import { scratchWindow } from "../../bytes/scratch.ts";
import { sha256Hex } from "../../bytes/sha256.ts";
import { zodIssues } from "../../text/zod-issues.ts";
import { buildNoSpendProof, round6 } from "../derive.ts";
import { ORPHAN_RELEASE_FILE } from "../paths.ts";
import { admitPngBytes, type PngAdmission } from "../png.ts";
import { decodeBase64Payload, splitPngDataUris } from "../redact.ts";
import {
  type ActorTrace,
  ActorTraceSchema,
  OrphanReleaseSchema,
  type RunBundle,
  type RunParticipant,
  RunStatusSchema,
  SandboxReceiptSchema,
  TERMINAL_COST_CATEGORIES,
  TerminalEventSchema,
  type TerminalLedgers,
  TerminalLedgersSchema,
} from "../schemas.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";
import { declaredChannelCheck } from "./declared.ts";
import { readPaths } from "./digest.ts";
import { base64Scratch, decodeText, digestOf, PAYLOAD_WINDOW_BYTES, parseNdjson, releaseLargeTextScratch } from "./scan.ts";

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function statusAndOrphans(ctx: VerifyContext, problems: string[]): void {
  const statusBytes = ctx.files.get("status.json");
  if (statusBytes) {
    const j = parseJson(new TextDecoder().decode(statusBytes));
    if (!j.ok) problems.push("status.json is not JSON");
    else {
      const s = RunStatusSchema.safeParse(j.value);
      if (!s.success) problems.push(`status.json: ${zodIssues(s.error)}`);
      else if (s.data.runId !== ctx.run) problems.push(`status.json names run ${s.data.runId}`);
      else if (s.data.state === "running") ctx.warnings.push("status.json says the run is still running (or its process died before finishing)");
    }
  }
  const orphanBytes = ctx.files.get(ORPHAN_RELEASE_FILE);
  if (orphanBytes) {
    const j = parseJson(new TextDecoder().decode(orphanBytes));
    if (!j.ok) problems.push(`${ORPHAN_RELEASE_FILE} is not JSON`);
    else {
      const o = OrphanReleaseSchema.safeParse(j.value);
      if (!o.success) problems.push(`${ORPHAN_RELEASE_FILE}: ${zodIssues(o.error)}`);
      else if (o.data.runId !== ctx.run) problems.push(`${ORPHAN_RELEASE_FILE} names run ${o.data.runId}`);
      // Only a signed appendix is evidence; an unsigned one is refused by `no unlisted files`.
      else if (ctx.appendices.has(ORPHAN_RELEASE_FILE)) ctx.orphanReleases.push(...o.data.releases);
    }
  }
}

function listedArtifact(ctx: VerifyContext, b: RunBundle, a: RunBundle["artifacts"][number], problems: string[]): void {
  const bytes = ctx.files.get(a.path);
  if (!bytes) {
    // A digested file is binary by construction: only a screenshot or data artifact may be.
    if (ctx.digested.has(a.path) && a.kind !== "screenshot" && a.kind !== "data") problems.push(`${a.path}: ${a.kind} artifact is not UTF-8 text`);
    return;
  }
  const text = a.kind === "screenshot" ? null : decodeText(bytes);
  if (a.kind !== "screenshot" && a.kind !== "data" && text === null) {
    problems.push(`${a.path}: ${a.kind} artifact is not UTF-8 text`);
    return;
  }
  const json = () => {
    const j = parseJson(text!);
    if (!j.ok) problems.push(`${a.path}: not JSON`);
    return j;
  };
  if (a.kind === "actor-trace") {
    const j = json();
    if (!j.ok) return;
    const r = ActorTraceSchema.safeParse(j.value);
    if (!r.success) return void problems.push(`${a.path}: ${zodIssues(r.error)}`);
    ctx.traces.set(a.path, r.data);
    const owner = b.participants.find((p) => p.trace === a.path);
    if (!owner) problems.push(`${a.path}: no participant references this trace`);
    else if (owner.id !== r.data.participantId) problems.push(`${a.path}: participantId ${r.data.participantId} != ${owner.id}`);
    else if (owner.status !== r.data.status) problems.push(`${a.path}: trace status ${r.data.status} != participant status ${owner.status}`);
  } else if (a.kind === "terminal-ledgers") {
    const j = json();
    if (!j.ok) return;
    const r = TerminalLedgersSchema.safeParse(j.value);
    const seat = /^seats\/([^/]+)\/terminal-ledgers\.json$/.exec(a.path)?.[1];
    if (!r.success) problems.push(`${a.path}: ${zodIssues(r.error)}`);
    else if (seat !== undefined) ctx.seatLedgers.set(seat, r.data);
    else if (ctx.ledgers) problems.push(`${a.path}: a second terminal-ledgers artifact`);
    else ctx.ledgers = r.data;
  } else if (a.kind === "terminal-events") {
    const r = parseNdjson(text!, TerminalEventSchema);
    if (r.error) problems.push(`${a.path}: ${r.error}`);
  } else if (a.kind === "sandbox-receipts") {
    const r = parseNdjson(text!, SandboxReceiptSchema);
    if (r.error) problems.push(`${a.path}: ${r.error}`);
    ctx.receipts.push(...r.records);
  } else if (a.kind === "events") {
    text!
      .split("\n")
      .filter((l) => l.trim())
      .forEach((l, i) => {
        const j = parseJson(l);
        if (!j.ok) problems.push(`${a.path}: line ${i + 1} is not JSON`);
        else if (!j.value || typeof j.value !== "object" || Array.isArray(j.value)) problems.push(`${a.path}: line ${i + 1} is not an object`);
      });
  } else if (a.kind === "report") {
    if (!/^\s*<!doctype html/i.test(text!)) problems.push(`${a.path}: report is not an HTML document`);
  }
}

/** `artifact schemas`: each listed artifact matches its kind's schema; status.json and the orphan appendix too. */
export function artifactSchemas(ctx: VerifyContext): CheckOutcome {
  const problems: string[] = [];
  statusAndOrphans(ctx, problems);
  const b = ctx.bundle;
  if (b) for (const a of b.artifacts) listedArtifact(ctx, b, a, problems);
  return { problems, ok: `status and ${ctx.traces.size} trace(s)${ctx.ledgers ? ", ledgers" : ""} match their schemas` };
}

/**
 * PNG admission is a pure function of the bytes. Within one verify, identical bytes are admitted
 * once (a report inlines the same frames it lists), keyed by digest; across calls only the very
 * same byte array is remembered (by identity), so every verify of a bundle read from disk
 * re-admits its PNGs while an in-memory fuzz pays once per distinct array.
 */
const admittedArrays = new WeakMap<Uint8Array, PngAdmission>();
async function admitOnce(bytes: Uint8Array, perCall: Map<string, PngAdmission>, key: string = digestOf(bytes)): Promise<PngAdmission> {
  let r = admittedArrays.get(bytes) ?? perCall.get(key);
  if (!r) r = await admitPngBytes(bytes);
  perCall.set(key, r);
  admittedArrays.set(bytes, r);
  return r;
}

/** Embedded PNG data-URI payloads of one text file, admitted (memoised per byte array). */
const embeddedOf = new WeakMap<Uint8Array, { count: number; problems: string[] }>();
async function admitEmbedded(rel: string, bytes: Uint8Array, perCall: Map<string, PngAdmission>): Promise<{ count: number; problems: string[] }> {
  const hit = embeddedOf.get(bytes);
  if (hit) return hit;
  const out = { count: 0, problems: [] as string[] };
  const text = decodeText(bytes);
  if (text?.includes("data:image/png;base64,")) {
    const { payloads } = splitPngDataUris(text);
    const scratch = scratchWindow(PAYLOAD_WINDOW_BYTES);
    for (let i = 0; i < payloads.length; i++) {
      scratch.add(base64Scratch(payloads[i]!.length));
      out.count++;
      const png = decodeBase64Payload(payloads[i]!);
      const adm = await admitOnce(png, perCall, sha256Hex(png));
      if (!adm.ok) out.problems.push(`${rel}: embedded PNG #${i + 1} not admitted (${adm.code}: ${adm.detail})`);
    }
    releaseLargeTextScratch(bytes);
  }
  embeddedOf.set(bytes, out);
  return out;
}

/** `screenshots admitted`: every PNG in the bundle, every embedded PNG, every screenshotRef; sets `raw` and `unscanned`. */
export async function screenshotsAdmitted(ctx: VerifyContext): Promise<CheckOutcome> {
  const problems: string[] = [];
  const perCall = new Map<string, PngAdmission>();
  const b = ctx.bundle;
  const shotPaths = new Set(b ? b.artifacts.filter((a) => a.kind === "screenshot").map((a) => a.path) : []);
  const pngs = new Set<string>(shotPaths);
  for (const rel of readPaths(ctx)) if (rel.toLowerCase().endsWith(".png")) pngs.add(rel);
  for (const rel of [...pngs].sort()) {
    const bytes = ctx.files.get(rel);
    const digested = ctx.digested.get(rel);
    if (!bytes && !digested) continue; // missing: reported by artifacts intact
    const adm = bytes ? await admitOnce(bytes, perCall) : digested!.admission;
    // A digested frame's verdict serves its copies too: a report inlines the frames it lists,
    // and decoding each a second time would cost the CPU and the scratch memory of the first.
    if (digested) perCall.set(digested.sha256, digested.admission);
    if (!adm.ok) problems.push(`${rel}: not admitted as PNG (${adm.code}: ${adm.detail})`);
  }
  let embedded = 0;
  for (const [rel, bytes] of ctx.files) {
    if (rel.toLowerCase().endsWith(".png")) continue;
    const e = await admitEmbedded(rel, bytes, perCall);
    embedded += e.count;
    problems.push(...e.problems);
    if (e.count) ctx.raw = true;
  }
  for (const [path, t] of ctx.traces) {
    for (const it of t.items) {
      if (!it.screenshotRef) continue;
      if (!shotPaths.has(it.screenshotRef.path)) problems.push(`${path} item ${it.id}: screenshotRef ${it.screenshotRef.path} is not a listed screenshot`);
      if (it.screenshotRef.redaction === "none") ctx.raw = true;
    }
    if (t.redaction.screenshots === "raw") ctx.raw = true;
    if (shotPaths.size > 0 && t.redaction.screenshots === "n/a" && t.items.some((i) => i.screenshotRef))
      problems.push(`${path}: references screenshots but declares screenshots n/a`);
  }
  if (shotPaths.size > 0)
    ctx.raw =
      ctx.raw ||
      ctx.traces.size === 0 ||
      [...ctx.traces.values()].some((t) => t.redaction.screenshots !== "blurred" && t.redaction.screenshots !== "ocr_scrubbed");
  for (const [rel, bytes] of ctx.files) {
    if (rel === "run.json" || shotPaths.has(rel)) continue;
    if (decodeText(bytes) === null) ctx.unscanned.push(rel);
  }
  // Digested files are binary by construction.
  for (const rel of ctx.digested.keys()) if (!shotPaths.has(rel)) ctx.unscanned.push(rel);
  return { problems, ok: `${pngs.size} PNG file(s)${embedded ? ` and ${embedded} embedded PNG(s)` : ""} admitted` };
}

/**
 * Problems of one terminal ledger `L` against run.json: its cost lines and no-spend proof add
 * up, and its cleanup is run.json's (only seat `seat`'s proofs for a seat ledger).
 */
function ledgerProblems(L: TerminalLedgers | null | undefined, b: RunBundle, seat?: string): string[] {
  const problems: string[] = [];
  if (!L) return ["terminal ledgers missing or not humanish.terminal-ledgers.v1"];
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
  const same = (x: readonly string[], y: readonly string[]) => JSON.stringify([...x].sort()) === JSON.stringify([...y].sort());
  if (!same(p.knownZeroLines, expect.knownZeroLines)) problems.push("no-spend proof knownZeroLines contradict the ledger");
  if (!same(p.knownNonZeroLines, expect.knownNonZeroLines)) problems.push("no-spend proof knownNonZeroLines contradict the ledger");
  if (!same(p.unmeasuredLines, expect.unmeasuredLines)) problems.push("no-spend proof unmeasuredLines contradict the ledger");
  if (p.knownTotalUsd !== L.cost.knownTotalUsd) problems.push("no-spend proof knownTotalUsd differs from the ledger");
  if (p.satisfied && p.knownNonZeroLines.length > 0) problems.push("no-spend proof satisfied with known non-zero lines");
  if (p.satisfied !== expect.satisfied) problems.push("no-spend proof satisfied contradicts the ledger");
  if (p.maxUsd !== null && L.cost.knownTotalUsd > p.maxUsd) problems.push(`known spend ${L.cost.knownTotalUsd} exceeds proof maxUsd ${p.maxUsd}`);
  if (p.maxUsd !== b.caps.maxUsd) problems.push(`no-spend proof maxUsd ${p.maxUsd} != caps.maxUsd ${b.caps.maxUsd}`);
  if (
    !same(
      L.cleanup.map((c) => `${c.id}:${c.outcome}`),
      b.cleanup.filter((c) => seat === undefined || c.participantId === seat).map((c) => `${c.id}:${c.outcome}`),
    )
  )
    problems.push("ledger cleanup differs from run.json cleanup");
  if (L.interventions.length > 0) problems.push(`${L.interventions.length} stdin intervention(s) recorded; participants run with stdin closed`);
  return problems;
}

/**
 * Walks the participants in order and hands `check` each one whose trace is present; pushes onto
 * `problems` a participant without a trace (allowed only when it failed or its seat never
 * started) and a listed trace that is missing or did not parse.
 */
function eachTrace(ctx: VerifyContext, b: RunBundle, problems: string[], check: (p: RunParticipant, t: ActorTrace) => void): void {
  const notStarted = new Set((b.study?.seats ?? []).filter((s) => s.phase === "not_started").map((s) => s.id));
  for (const p of b.participants) {
    if (p.trace === null) {
      if (p.status !== "failed" && !notStarted.has(p.id)) problems.push(`participant ${p.id} has no trace`);
      continue;
    }
    const t = ctx.traces.get(p.trace);
    if (!t) problems.push(`participant ${p.id}: trace ${p.trace} missing or invalid`);
    else check(p, t);
  }
}

/** `terminal-product evidence`: a live terminal run lists its ledgers, events, transcript and terminal traces (dry run exempt). */
export function terminalEvidence(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  if (b.route !== "terminal") return { problems: [], ok: "browser run: terminal evidence not applicable" };
  // A dry run has no evidence to check, only what it records of the declaration.
  if (b.mode === "dry-run") {
    const channel = declaredChannelCheck(b);
    return { problems: channel.problems, ok: `dry run: contract only, exempt${channel.compared ? "; its key channel is the one the lab declares" : ""}` };
  }
  const listed = (kind: string, path: string) => b.artifacts.some((a) => a.kind === kind && a.path === path);
  const problems: string[] = [];
  // A many-seat run keeps each seat's evidence in its folder; a one-seat run at the root.
  const folders = (b.study?.seats ?? []).filter((s) => s.folder !== null);
  const sets: { prefix: string; ledger: TerminalLedgers | null | undefined; seat?: string }[] = folders.length
    ? folders.map((s) => ({ prefix: s.folder!, ledger: ctx.seatLedgers.get(s.id), seat: s.id }))
    : [{ prefix: "", ledger: ctx.ledgers }];
  for (const set of sets) {
    const where = set.seat ? `seat ${set.seat}: ` : "";
    if (!listed("terminal-ledgers", `${set.prefix}terminal-ledgers.json`)) problems.push(`${set.prefix}terminal-ledgers.json is not listed`);
    problems.push(...ledgerProblems(set.ledger, b, set.seat).map((p) => where + p));
    if (!listed("terminal-events", `${set.prefix}terminal-events.ndjson`)) problems.push(`${set.prefix}terminal-events.ndjson is not listed`);
    if (!listed("terminal-transcript", `${set.prefix}terminal-transcript.txt`)) problems.push(`${set.prefix}terminal-transcript.txt is not listed`);
  }
  eachTrace(ctx, b, problems, (p, t) => {
    if (t.lane !== "terminal") problems.push(`participant ${p.id}: trace lane ${t.lane}, expected terminal`);
  });
  return { problems, ok: "ledgers, events, transcript and traces complete" };
}

/** `browser evidence`: a live browser run has browser-lane traces, desktop geometry, and a screenshot for a pass. */
export function browserEvidence(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  if (b.route !== "browser") return { problems: [], ok: "not a browser run" };
  if (b.mode === "dry-run") return { problems: [], ok: "dry run: contract only, exempt" };
  const problems: string[] = [];
  eachTrace(ctx, b, problems, (p, t) => {
    if (t.lane !== "scripted-browser" && t.lane !== "computer-use")
      problems.push(`participant ${p.id}: trace lane ${t.lane}, expected scripted-browser or computer-use`);
    if (!p.desktopGeometry) problems.push(`participant ${p.id}: no desktop geometry recorded`);
    if (p.status === "passed" && !t.items.some((i) => i.screenshotRef)) problems.push(`participant ${p.id} passed without a single screenshot`);
  });
  return { problems, ok: "traces, geometry and screenshots present" };
}
