/**
 * The scoring context: what a scorer's hooks receive. It is assembled from the bundle as it is
 * about to be sealed — the `run.json` view from the writer and the evidence files the lanes
 * already wrote (redacted on their way to disk) — so a scorer sees exactly what the bundle
 * holds, never a raw value. The result is a deep-frozen copy: a hook that tries to change it
 * throws (in strict-mode modules) and changes nothing either way.
 */
import { join } from "node:path";
import { safeReadFile } from "../bundle/safe-read.ts";
import { type ActorTrace, ActorTraceSchema, type RunBundle, type TerminalLedgers, TerminalLedgersSchema } from "../bundle/schemas.ts";
import type { ScoringContext, ScoringParticipant } from "./shapes.ts";

/** Largest evidence file read into the context, bytes (a transcript is bounded well below this by its lane). */
export const MAX_CONTEXT_FILE_BYTES = 64 * 1024 * 1024;

/** Freeze `v` and everything reachable from it. */
export function deepFreeze<T>(v: T): Readonly<T> {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

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

/**
 * Assemble and freeze the context of `view` (the `run.json` the writer is about to seal, see
 * `RunWriter.preview`) from the files in `runDir`. Never throws for evidence: a listed file that
 * does not read or parse is given as null and named in `notes`.
 */
export function buildScoringContext(view: RunBundle, runDir: string, notes: ContextNotes = { warnings: [] }): Readonly<ScoringContext> {
  const bundle = structuredClone(view);
  const seatFolders = new Map((bundle.study?.seats ?? []).map((s) => [s.id, s.folder]));
  const one = bundle.participants.length === 1;
  const participants: ScoringParticipant[] = bundle.participants.map((p) => {
    const folder = seatFolders.get(p.id) ?? (one ? null : `seats/${p.id}/`);
    const prefix = prefixOf(folder);
    const mine = bundle.artifacts.filter((a) => inSeat(a.path, prefix));
    const ledgersPath = mine.find((a) => a.kind === "terminal-ledgers")?.path;
    const transcriptPath = mine.find((a) => a.kind === "terminal-transcript")?.path;
    const trace: ActorTrace | null = p.trace ? readJson(runDir, p.trace, (v) => ActorTraceSchema.safeParse(v), notes) : null;
    const ledgers: TerminalLedgers | null = ledgersPath ? readJson(runDir, ledgersPath, (v) => TerminalLedgersSchema.safeParse(v), notes) : null;
    return {
      id: p.id,
      actorType: p.actorType,
      status: p.status,
      completionReason: p.completionReason,
      folder,
      trace,
      ledgers,
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
