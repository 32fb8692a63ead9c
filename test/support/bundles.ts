/**
 * Building blocks of run bundles shared by the bundle tests (test/bundle/helpers.ts), the report
 * tests (test/report/fixtures.ts) and the bundle bench (bench/bundle.ts): the temp project, the
 * lab block, a scripted participant's trace, a browser participant entry, the no-spend
 * terminal cost ledger, and the desktop receipt, screenshots and finalize input of a live browser run. Each fixture module composes these with its own values (times, items,
 * hostile text), so the shapes the writer and verifier judge live in one place.
 */
import { chmodSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ActorTrace,
  buildTerminalCostLedger,
  digestText,
  type RunBundleInput,
  type RunWriter,
  type TerminalCostLedger,
  unmeasuredLine,
} from "../../src/bundle/index.ts";

/**
 * A fresh temp project directory (its real path, so symlinked tmp dirs compare equal) named
 * `prefix…`, and its cleanup. With `mode`, the directory is chmod-ed to it (e.g. 0o755 so a
 * Chromium running as another user can read the run).
 */
export function tempProject(prefix: string, mode?: number): { cwd: string; cleanup: () => void } {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  if (mode !== undefined) chmodSync(cwd, mode);
  return { cwd, cleanup: () => rmSync(cwd, { recursive: true, force: true }) };
}

/** The run bundle's `lab` block for lab `id`, sourced from `humanish/labs/<id>.yaml` with digest `sha256` (64 hex). */
export function labBlock(id: string, title: string, sha256: string): RunBundleInput["lab"] {
  return { id, title, source: { ref: `humanish/labs/${id}.yaml`, sha256 } };
}

/** The per-lane fields of a scripted participant's trace. */
const SCRIPTED_LANES = {
  terminal: {
    actorType: "scripted-terminal",
    lane: "terminal",
    personaId: "autonomous-terminal-agent",
    redaction: { status: "passed", screenshots: "n/a", notes: "scrubbed" },
  },
  browser: {
    actorType: "scripted-browser",
    lane: "scripted-browser",
    personaId: "scripted",
    redaction: { status: "passed", screenshots: "raw", notes: "raw frames" },
  },
} as const satisfies Record<string, { actorType: string; lane: ActorTrace["lane"]; personaId: string; redaction: ActorTrace["redaction"] }>;

/** What a scripted trace's caller gives: its times, counts and items, and optionally any other trace field. */
export type ScriptedTraceFields = Pick<ActorTrace, "startedAt" | "completedAt" | "durationMs" | "counts" | "items"> &
  Partial<ActorTrace> & {
    /** The text whose digest is the persona's `promptDigest`; default `"steps"`. */
    prompt?: string;
  };

/**
 * The `humanish.actor-trace.v1` of participant `p1`, a scripted actor of `kind` that passed
 * (`goal_satisfied`, "all steps ran"), with the caller's times, counts and items. Any other
 * field given in `fields` replaces the default (key order stays the schema's).
 */
export function scriptedTrace(kind: keyof typeof SCRIPTED_LANES, fields: ScriptedTraceFields): ActorTrace {
  const lane = SCRIPTED_LANES[kind];
  const { prompt = "steps", startedAt, completedAt, durationMs, counts, items, ...rest } = fields;
  return {
    schema: "humanish.actor-trace.v1",
    participantId: "p1",
    actorType: lane.actorType,
    provider: "humanish",
    protocol: "scripted-steps",
    lane: lane.lane,
    persona: { id: lane.personaId, traitsApplied: [], promptDigest: digestText(prompt) },
    redaction: { ...lane.redaction },
    startedAt,
    completedAt,
    durationMs,
    status: "passed",
    completionReason: "goal_satisfied",
    reason: "all steps ran",
    ids: {},
    counts,
    items,
    ...rest,
  };
}

/**
 * The run bundle's entry for participant `p1`, a scripted browser actor that passed in
 * `durationMs` (ms) on the `desktop` preset whose requested screen is `screen` (CSS pixels;
 * default 1440×950), its trace at `actor.json`.
 */
export function browserParticipant(
  durationMs: number,
  screen: { width: number; height: number } = { width: 1440, height: 950 },
): NonNullable<RunBundleInput["participants"]>[number] {
  return {
    id: "p1",
    actorType: "scripted-browser",
    status: "passed",
    completionReason: "goal_satisfied",
    reason: "ok",
    trace: "actor.json",
    durationMs,
    desktopGeometry: { preset: "desktop", screen: { requested: screen }, warnings: [] },
  };
}

/**
 * The terminal cost ledger of a run that spent nothing: product and payment USD 0 on a
 * no-spend signal (rates as of 2026-11-01), media and provider unmeasured.
 */
export function noSpendTerminalCost(): TerminalCostLedger {
  return buildTerminalCostLedger({
    product: { kind: "product", usd: 0, basis: "no-spend-signal", ratesAsOf: "2026-11-01", source: "lab declares no paid product", reason: null },
    media: unmeasuredLine("media", "no media meter"),
    payment: { kind: "payment", usd: 0, basis: "no-spend-signal", ratesAsOf: "2026-11-01", source: "no payment surface", reason: null },
    provider: unmeasuredLine("provider", "no_token_usage"),
  });
}

/** One screenshot file of a run: its bundle path and PNG bytes. */
export type ShotFile = readonly [path: string, png: Uint8Array];

/**
 * Starts a live browser run in `w` as the desktop lanes do: the durable sandbox receipt of the
 * desktop container `desktop` (64 hex) at `at`, then each screenshot file, in order.
 */
export async function writeDesktopShots(w: RunWriter, o: { desktop: string; at: string; shots: readonly ShotFile[] }): Promise<void> {
  await w.appendNdjson(
    "sandbox-receipts.ndjson",
    { at: o.at, provider: "docker", id: o.desktop, kind: "desktop" },
    { kind: "sandbox-receipts", durable: true },
  );
  for (const [path, png] of o.shots) await w.writeArtifact(path, png, { kind: "screenshot" });
}

/**
 * The finalize input of a live local browser run on the app at http://127.0.0.1:8080/ whose
 * desktop `desktop` (64 hex) was released at `completedAt`; the caller gives its lab, times,
 * participants and tasks, and any other field it sets replaces the default.
 */
export function liveBrowserInput(
  o: Pick<RunBundleInput, "createdAt" | "lab" | "participants" | "tasks"> & Partial<RunBundleInput> & { completedAt: string; desktop: string },
): RunBundleInput {
  const { desktop, ...fields } = o;
  return {
    route: "browser",
    mode: "live",
    target: "local",
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    cleanup: [{ id: desktop, provider: "docker", kind: "desktop", outcome: "released", reason: "inspect-404", at: o.completedAt }],
    ...fields,
  };
}
