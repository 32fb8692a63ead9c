/**
 * The scoring context: what a scorer's hooks receive. It is assembled from the bundle as it is
 * about to be sealed — the `run.json` view from the writer and the evidence files the lanes
 * already wrote (redacted on their way to disk) — so a scorer sees exactly what the bundle
 * holds, never a raw value. The result is a deep-frozen copy: a hook that tries to change it
 * throws (in strict-mode modules) and changes nothing either way.
 */
import { join } from "node:path";
import { z } from "zod";
import { safeReadFile } from "../bundle/safe-read.ts";
import { type ActorTrace, ActorTraceSchema, type RunBundle, type TerminalLedgers, TerminalLedgersSchema } from "../bundle/schemas.ts";
import { deepFreeze } from "./freeze.ts";
import {
  type ScoringContext,
  type ScoringDesktopLedger,
  ScoringDesktopLedgerSchema,
  type ScoringModelLedger,
  ScoringModelLedgerSchema,
  type ScoringParticipant,
} from "./shapes.ts";

/** Largest evidence file read into the context, bytes (a transcript is bounded well below this by its lane). */
export const MAX_CONTEXT_FILE_BYTES = 64 * 1024 * 1024;

export { deepFreeze } from "./freeze.ts";

/** What assembling the context noticed (a listed evidence file that did not read or parse). */
export interface ContextNotes {
  warnings: string[];
}

function readText(runDir: string, rel: string, notes: ContextNotes): string | null {
  const r = safeReadFile(join(runDir, rel), MAX_CONTEXT_FILE_BYTES);
  if (!r.ok) {
    notes.warnings.push(`${rel} was not given to the scorer (${r.reason})`);
    return null;
  }
  return new TextDecoder().decode(r.bytes);
}

function readJson<T>(runDir: string, rel: string, parse: (v: unknown) => { success: true; data: T } | { success: false }, notes: ContextNotes): T | null {
  const text = readText(runDir, rel, notes);
  if (text === null) return null;
  try {
    const r = parse(JSON.parse(text));
    if (r.success) return r.data;
  } catch {
    // reported below
  }
  notes.warnings.push(`${rel} was not given to the scorer (it does not match its schema)`);
  return null;
}

/** The bundle-relative folder prefix of a seat's files ('' for the root layout). */
function prefixOf(folder: string | null): string {
  return folder ?? "";
}

/** True when `path` belongs to the seat with folder prefix `prefix` (the root layout owns everything outside `seats/`). */
function inSeat(path: string, prefix: string): boolean {
  return prefix === "" ? !path.startsWith("seats/") : path.startsWith(prefix);
}

/** The model ledger listed for participant `pid` (a ledger names its participant), or null. */
function seatModelLedger(runDir: string, bundle: RunBundle, pid: string, notes: ContextNotes): ScoringModelLedger | null {
  for (const a of bundle.artifacts) {
    if (a.kind !== "model-ledger") continue;
    const l = readJson(runDir, a.path, (v) => ScoringModelLedgerSchema.safeParse(v), notes);
    if (l?.participantId === pid) return l;
  }
  return null;
}

/** `desktop-ledgers.json` of a browser run as written by the route: release proofs and per-seat geometry. */
interface DesktopLedgers {
  desktops: ScoringDesktopLedger["cleanup"];
  geometry: (NonNullable<ScoringDesktopLedger["geometry"]> & { participantId: string })[];
}

function readDesktopLedgers(runDir: string, bundle: RunBundle, notes: ContextNotes): DesktopLedgers | null {
  if (!bundle.artifacts.some((a) => a.path === "desktop-ledgers.json")) return null;
  const geometry = ScoringDesktopLedgerSchema.shape.geometry.unwrap().extend({ participantId: z.string() });
  const schema = z.looseObject({ desktops: ScoringDesktopLedgerSchema.shape.cleanup, geometry: z.array(geometry) });
  return readJson(runDir, "desktop-ledgers.json", (v) => schema.safeParse(v), notes);
}

/** A seat's share of the desktop ledgers: the proofs naming it (all of them in a one-seat run) and its geometry. */
function seatDesktop(d: DesktopLedgers, pid: string, one: boolean): ScoringDesktopLedger {
  const g = d.geometry.find((x) => x.participantId === pid);
  return {
    cleanup: d.desktops.filter((c) => c.participantId === pid || (one && c.participantId === undefined)),
    geometry: g ? { preset: g.preset, width: g.width, height: g.height, startMs: g.startMs } : null,
  };
}

/**
 * Assemble and freeze the context of `view` (the `run.json` the writer is about to seal, see
 * `RunWriter.preview`) from the files in `runDir`. Never throws for evidence: a listed file that
 * does not read or parse is given as null and named in `notes`.
 */
export function buildScoringContext(view: RunBundle, runDir: string, notes: ContextNotes = { warnings: [] }): Readonly<ScoringContext> {
  const bundle = structuredClone(view);
  const seatFolders = new Map((bundle.study?.seats ?? []).map((s) => [s.id, s.folder]));
  const one = bundle.participants.length === 1;
  const desktops = bundle.route === "browser" ? readDesktopLedgers(runDir, bundle, notes) : null;
  const participants: ScoringParticipant[] = bundle.participants.map((p) => {
    const folder = seatFolders.get(p.id) ?? (one ? null : `seats/${p.id}/`);
    const prefix = prefixOf(folder);
    const mine = bundle.artifacts.filter((a) => inSeat(a.path, prefix));
    const ledgersPath = mine.find((a) => a.kind === "terminal-ledgers")?.path;
    const transcriptPath = mine.find((a) => a.kind === "terminal-transcript")?.path;
    const trace: ActorTrace | null = p.trace ? readJson(runDir, p.trace, (v) => ActorTraceSchema.safeParse(v), notes) : null;
    const ledgers: TerminalLedgers | null = ledgersPath ? readJson(runDir, ledgersPath, (v) => TerminalLedgersSchema.safeParse(v), notes) : null;
    const modelLedger = seatModelLedger(runDir, bundle, p.id, notes);
    return {
      id: p.id,
      actorType: p.actorType,
      status: p.status,
      completionReason: p.completionReason,
      folder,
      trace,
      ledgers,
      modelLedger,
      desktop: desktops ? seatDesktop(desktops, p.id, one) : null,
      transcript: transcriptPath ? readText(runDir, transcriptPath, notes) : null,
      screenshots: mine.filter((a) => a.kind === "screenshot").map((a) => a.path),
      tasks: bundle.tasks.filter((t) => (t.participantId === undefined ? one : t.participantId === p.id)),
    };
  });
  const first = participants[0];
  const s = bundle.subject;
  const ctx: ScoringContext = {
    schema: "humanish.scoring-context.v1",
    runId: bundle.runId,
    labId: bundle.lab.id,
    route: bundle.route,
    mode: bundle.mode,
    product: {
      source: s.source,
      ...(s.name !== undefined ? { name: s.name } : {}),
      ...(s.publicSurfaces ? { publicSurfaces: [...s.publicSurfaces] } : {}),
      ...(s.appUrl !== undefined ? { appUrl: s.appUrl } : {}),
    },
    bundle,
    participants,
    trace: first?.trace ?? null,
    ledgers: first?.ledgers ?? null,
    transcript: first?.transcript ?? null,
  };
  return deepFreeze(ctx);
}
