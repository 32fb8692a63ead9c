/**
 * Per-seat facts of a many-seat study, derived from what `run.json` and the seats' traces
 * already record (pure: no I/O). A study's stakeholder reads one row per seat: who it was
 * (persona, device), how it ended, what it cost and how many screenshots it left.
 */
import { participantCategory } from "../bundle/derive.ts";
import { claimContradicted } from "../bundle/goal.ts";
import type { ActorTrace, RunBundle, RunParticipant } from "../bundle/index.ts";
import type { ReportParticipant } from "./model.ts";

/**
 * A seat's cost from the run's cost lines that name it: the sum of its measured lines (USD),
 * `usd: null` when none of them is measured, `fullyMeasured: false` when any is unmeasured.
 * Undefined when no line names the seat, so nothing claims the seat was free.
 */
export function seatCost(lines: RunBundle["cost"]["lines"], participantId: string): { usd: number | null; fullyMeasured: boolean } | undefined {
  const mine = lines.filter((l) => l.participantId === participantId);
  if (mine.length === 0) return undefined;
  const measured = mine.filter((l) => l.usd !== null);
  const usd = measured.length === 0 ? null : Math.round(measured.reduce((n, l) => n + (l.usd ?? 0), 0) * 1e6) / 1e6;
  return { usd, fullyMeasured: measured.length === mine.length };
}

/**
 * The seat a listed screenshot belongs to when no trace references it: a path whose segment is
 * the seat id (`seats/p2/…`, `screenshots/p2/…`) or a file name starting `<id>-` (`screenshots/p2-turn-01.png`).
 * The longest matching id wins, so `p10-…` is never given to `p1`. Undefined when none matches.
 */
export function seatOfPath(path: string, seatIds: readonly string[]): string | undefined {
  const segs = path.split("/");
  let best: string | undefined;
  for (const id of seatIds) {
    const hit = segs.slice(0, -1).includes(id) || (segs.at(-1) ?? "").startsWith(`${id}-`);
    if (hit && (best === undefined || id.length > best.length)) best = id;
  }
  return best;
}

/** `desktop 1440×950` from a browser seat's geometry (verified screen size when known), or the lane's device. */
function deviceOf(p: RunParticipant): string | undefined {
  const g = p.desktopGeometry;
  const declared = p.device;
  if (!g) return declared;
  const size = g.screen.verified ?? g.screen.requested;
  return `${declared ?? g.preset} ${size.width}×${size.height}`;
}

/**
 * One seat row from its `run.json` entry, its trace (or null), its tasks and the run's cost
 * lines, and the study runner's record of the seat when the bundle has one. `screenshotCount`
 * is filled in by the caller once screenshots are attributed.
 */
export function seatRow(
  p: RunParticipant,
  trace: ActorTrace | null,
  tasks: RunBundle["tasks"],
  lines: RunBundle["cost"]["lines"],
  seat?: NonNullable<RunBundle["study"]>["seats"][number],
): ReportParticipant {
  const model = trace?.ids.model ?? trace?.runtime?.requestedModel;
  const persona = p.persona ?? trace?.persona.id;
  const device = deviceOf(p);
  const mine = tasks.filter((t) => t.participantId === p.id);
  const cost = seatCost(lines, p.id);
  const reason = p.deadlineFired ? `${p.reason ? `${p.reason} ` : ""}(deadline fired: ${p.deadlineFired})` : p.reason;
  const durationMs = p.durationMs ?? trace?.durationMs;
  return {
    id: p.id,
    actorType: p.actorType,
    ...(model ? { model } : {}),
    status: p.status,
    completionReason: p.completionReason ?? "—",
    ...(reason ? { reason } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(persona ? { persona } : {}),
    ...(device ? { device } : {}),
    ...(p.status === "contract_proof_only" ? {} : { category: participantCategory(p) }),
    ...(p.claimed ? { claimed: p.claimed } : {}),
    ...(claimContradicted(p) ? { contradicted: true } : {}),
    ...(mine.length > 0 ? { tasksPassed: mine.filter((t) => t.passed).length, tasksTotal: mine.length } : {}),
    ...(cost ? { cost } : {}),
    ...(seat ? { seatState: seat.state, seatPhase: seat.phase } : {}),
    ...(seat?.error ? { seatError: `${seat.error.code}: ${seat.error.message}` } : {}),
  };
}
