/**
 * `study seats`: a study's seats add up. The seat list has exactly the declared number of
 * seats, one participant each; the totals are the seats' sums; every task has one result per
 * seat and the review's funnel counts what the task results say; each created seat has its
 * cleanup proof; the known spend stays within `maxTotalUsd`.
 */
import { studyTotals } from "../derive.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";

export function studySeats(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const st = b.study;
  if (!st) {
    // Bundles written before seats existed carry no study section; one participant needs none.
    return b.participants.length <= 2
      ? { problems: [], ok: "no study section (a bundle without seats)" }
      : { problems: ["many participants but no study section"], ok: "" };
  }
  const problems: string[] = [];
  const seats = st.seats;
  if (seats.length !== st.declaredSeats) problems.push(`study lists ${seats.length} seat(s) but declares ${st.declaredSeats}`);
  const ids = seats.map((s) => s.id);
  if (new Set(ids).size !== ids.length) problems.push("seat ids repeat");
  seats.forEach((s, i) => {
    if (s.index !== i) problems.push(`seat ${s.id} has index ${s.index}, expected ${i}`);
  });
  const pids = b.participants.map((p) => p.id);
  if (JSON.stringify(pids) !== JSON.stringify(ids)) problems.push(`participants [${pids.join(", ")}] are not the seats [${ids.join(", ")}]`);
  for (const s of seats) {
    if (s.folder !== null && s.folder !== `seats/${s.id}/`) problems.push(`seat ${s.id}: folder ${s.folder} is not seats/${s.id}/`);
    if (s.folder !== null && !b.artifacts.some((a) => a.path.startsWith(s.folder!))) problems.push(`seat ${s.id}: no artifact is listed in ${s.folder}`);
    if (s.state === "failed" && !s.error) problems.push(`seat ${s.id} failed without an error`);
    if (s.release !== "none") {
      const proof = b.cleanup.find((c) => c.participantId === s.id && (s.containerId === undefined || c.id === s.containerId));
      if (!proof) problems.push(`seat ${s.id}: release ${s.release} but no cleanup proof`);
      else if (proof.outcome !== s.release) problems.push(`seat ${s.id}: release ${s.release} but its cleanup proof says ${proof.outcome}`);
    }
  }
  const t = st.totals;
  const expect = studyTotals(seats);
  for (const [k, v] of Object.entries(expect)) {
    const got = t[k as keyof typeof t];
    if (got !== v) problems.push(`totals.${k} ${got} != ${v} from the seats`);
  }
  // The funnel: every declared task has exactly one result per seat, and the review counts them.
  const byTask = new Map<string, { results: number; passed: number; seats: Set<string> }>();
  for (const r of b.tasks) {
    const e = byTask.get(r.id) ?? { results: 0, passed: 0, seats: new Set<string>() };
    e.results++;
    if (r.passed) e.passed++;
    if (r.participantId) e.seats.add(r.participantId);
    byTask.set(r.id, e);
  }
  for (const [id, e] of byTask) {
    if (e.results !== seats.length || e.seats.size !== seats.length)
      problems.push(`task ${id} has ${e.results} result(s) over ${e.seats.size} seat(s), expected one per seat (${seats.length})`);
    const row = b.review.tasks.tasks.find((x) => x.id === id);
    if (row && row.completed !== e.passed) problems.push(`review funnel says ${row.completed} completed ${id}, the task results say ${e.passed}`);
  }
  if (b.review.participants.total !== seats.length)
    problems.push(`review counts ${b.review.participants.total} participant(s), the study has ${seats.length} seats`);
  if (st.maxTotalUsd !== null && expect.knownUsd > st.maxTotalUsd)
    problems.push(`known study spend ${expect.knownUsd} USD exceeds maxTotalUsd ${st.maxTotalUsd}`);
  if (st.concurrency > st.declaredSeats && st.declaredSeats > 0) problems.push(`concurrency ${st.concurrency} exceeds the ${st.declaredSeats} seat(s)`);
  if (st.waves !== Math.ceil(st.declaredSeats / st.concurrency)) problems.push(`waves ${st.waves} != ceil(${st.declaredSeats} / ${st.concurrency})`);
  return {
    problems,
    ok: `${seats.length}/${st.declaredSeats} seat(s): ${expect.completed} completed, ${expect.failed} failed, ${expect.interrupted} interrupted, ${expect.budgetReached} budget_reached; funnel sums`,
  };
}
