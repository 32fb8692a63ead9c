/** Checks of what the bundle claims: cleanup proven, caps respected, cost labels, engagement, verdict. */
import { findActor } from "../../actor-registry/registry.ts";
import { deriveVerdict, round6 } from "../derive.ts";
import { type CostLine, TERMINAL_COST_CATEGORIES } from "../schemas.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";
import { unknownSpendBounds } from "./unknown-spend.ts";

/** Grace beyond `maxMinutes` for the deadline kill to land (ms). */
export const DEADLINE_GRACE_MS = 60_000;

/**
 * `cleanup proven`: every resource released by its exact id, or released later by orphan
 * reconciliation as recorded in a signed `orphan-release.json` appendix; every receipt has a
 * released proof; a dry run created nothing.
 */
export function cleanupProven(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const problems: string[] = [];
  if (b.mode === "dry-run") {
    if (b.cleanup.length) problems.push(`dry run records ${b.cleanup.length} resource(s); a dry run creates none`);
    if (ctx.receipts.length) problems.push("dry run has sandbox receipts; a dry run creates no resources");
    return { problems, ok: "dry run: no resources created" };
  }
  const later = new Set(ctx.orphanReleases.filter((c) => c.outcome === "released").map((c) => c.id));
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
  for (const r of ctx.receipts) if (!proven.has(r.id)) problems.push(`${r.provider} ${r.id} has a receipt but no released proof`);
  if (b.participants.some((p) => p.trace !== null) && b.cleanup.length === 0) problems.push("participants ran but no resource release is recorded");
  return {
    problems,
    ok: b.cleanup.length
      ? `${b.cleanup.length} resource(s) released and confirmed gone${reclaimed ? ` (${reclaimed} by later orphan reconciliation, signed appendix)` : ""}`
      : "no resource was created",
  };
}

/** `caps respected`: live terminal runs declare caps; spend, billable jobs and durations stay within them. */
export function capsRespected(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const problems: string[] = [];
  const c = b.caps;
  if (b.mode === "live" && b.route === "terminal" && b.outcome.state === "completed") {
    if (c.maxUsd === null) problems.push("live terminal run without caps.maxUsd");
    if (c.maxMinutes === null || c.maxMinutes <= 0) problems.push("live terminal run without a positive caps.maxMinutes");
  }
  // maxUsd is per seat: a one-seat run compares its whole cost, a many-seat run each seat's
  // lines (the study's own cap, maxTotalUsd, is checked by `study seats`).
  const many = (b.study?.seats.length ?? 1) > 1;
  if (c.maxUsd !== null && !many) {
    // The known lines, even when the total is unmeasured: what is known already counts against the cap.
    const knownUsd = round6(b.cost.lines.reduce((a, l) => a + (l.usd ?? 0), 0));
    if (knownUsd > c.maxUsd) problems.push(`estimated cost ${knownUsd} USD exceeds maxUsd ${c.maxUsd}`);
    if (ctx.ledgers && ctx.ledgers.cost.knownTotalUsd > c.maxUsd)
      problems.push(`known terminal spend ${ctx.ledgers.cost.knownTotalUsd} USD exceeds maxUsd ${c.maxUsd}`);
  }
  if (c.maxUsd !== null && many) {
    for (const p of b.participants) {
      const usd = round6(b.cost.lines.filter((l) => l.participantId === p.id).reduce((a, l) => a + (l.usd ?? 0), 0));
      if (usd > c.maxUsd) problems.push(`seat ${p.id}: known cost ${usd} USD exceeds maxUsd ${c.maxUsd} (per seat)`);
    }
    for (const [seat, L] of ctx.seatLedgers)
      if (L.cost.knownTotalUsd > c.maxUsd) problems.push(`seat ${seat}: known terminal spend ${L.cost.knownTotalUsd} USD exceeds maxUsd ${c.maxUsd}`);
  }
  // maxJobs counts billable jobs: participants whose actor calls a model. A scripted participant
  // is no job; an unknown actor type counts, fail-closed.
  // A seat the study never started because its budget was spent ran no job.
  const billable = b.participants.filter(
    (p) => findActor(p.actorType)?.capabilities.byoModel !== false && !(p.trace === null && p.completionReason === "budget_reached"),
  ).length;
  if (c.maxJobs !== null && billable > c.maxJobs) problems.push(`${billable} billable participant job(s) exceed maxJobs ${c.maxJobs}`);
  if (c.maxMinutes !== null && c.maxMinutes > 0) {
    const limit = c.maxMinutes * 60_000 + DEADLINE_GRACE_MS;
    for (const p of b.participants)
      if (p.durationMs !== undefined && p.durationMs > limit)
        problems.push(`participant ${p.id} ran ${p.durationMs} ms, over maxMinutes ${c.maxMinutes} (+${DEADLINE_GRACE_MS} ms grace)`);
    for (const t of ctx.traces.values())
      if (t.durationMs > limit) problems.push(`trace of ${t.participantId} ran ${t.durationMs} ms, over maxMinutes ${c.maxMinutes}`);
  }
  const caps = `caps maxUsd=${c.maxUsd ?? "none"} maxJobs=${c.maxJobs ?? "none"} maxMinutes=${c.maxMinutes ?? "none"}`;
  const unknown = unknownSpend(ctx, c.maxUsd);
  return { problems: [...problems, ...unknown.problems], ok: `${caps} respected${unknown.note}` };
}

/**
 * What unknown spend does to `maxUsd` (per seat): a seat whose known cost plus its unknown
 * requests' admitted worst cases passes the cap is a problem (the cap was not shown to hold);
 * within it, the message says the bound is a worst case; a cost with no bound at all is a
 * warning, and the message says the caps hold for the known spend only.
 */
function unknownSpend(ctx: VerifyContext, maxUsd: number | null): { problems: string[]; note: string } {
  const unknownLines = ctx.bundle?.cost.lines.filter((l) => l.usd === null).length ?? 0;
  const bounds = unknownSpendBounds(ctx.files);
  const problems: string[] = [];
  const notes: string[] = [];
  let unbounded = unknownLines > 0 && bounds.length === 0;
  for (const b of bounds) {
    if (b.worstCaseUsd === null) unbounded = true;
    else if (maxUsd !== null && b.worstCaseUsd > maxUsd)
      problems.push(
        `seat ${b.participantId}: ${b.unknown} request(s) of unknown cost; at their admitted worst case the spend could reach ${b.worstCaseUsd} USD, over maxUsd ${maxUsd}`,
      );
    else notes.push(`${b.participantId} at most ${b.worstCaseUsd} USD`);
  }
  const bounded = notes.length ? `; unknown costs counted at their admitted worst case (${notes.join(", ")})` : "";
  if (!unbounded) return { problems, note: bounded };
  const warning = `${unknownLines || "some"} cost line(s) are unknown and not bounded by a ledger: the caps are shown for the known spend only`;
  if (!ctx.warnings.includes(warning)) ctx.warnings.push(warning);
  return { problems, note: `${bounded} (known spend only: ${unknownLines || "some"} cost line(s) unknown)` };
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

/** `cost labeling`: every cost line is dated and sourced, or null with a reason; totals and dates add up. */
export function costLabeling(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  const ok = "every cost line is dated and sourced, or null with a reason";
  if (!b) return { problems: ["no valid bundle"], ok };
  const problems: string[] = [];
  const lines: [string, CostLine][] = b.cost.lines.map((l, i) => [`cost.lines[${i}]`, l]);
  if (ctx.ledgers) for (const c of TERMINAL_COST_CATEGORIES) lines.push([`terminal-ledgers cost.${c}`, ctx.ledgers.cost.lines[c]]);
  for (const [seat, L] of ctx.seatLedgers) for (const c of TERMINAL_COST_CATEGORIES) lines.push([`seats/${seat}/terminal-ledgers cost.${c}`, L.cost.lines[c]]);
  for (const [where, l] of lines) {
    const bad = labelOk(l);
    if (bad) problems.push(`${where} ${bad}`);
  }
  for (const [path, t] of ctx.traces) {
    const e = t.estimatedCost;
    if (!e) continue;
    const bad = labelOk({ usd: e.estimatedCostUsd, ratesAsOf: e.ratesAsOf, source: e.source, reason: e.reason });
    if (bad) problems.push(`${path} estimatedCost ${bad}`);
  }
  const known = b.cost.lines.filter((l) => l.usd !== null);
  // Null unless every line is measured: a known-lines sum beside an unmeasured line would read as the whole spend.
  const expectTotal = known.length && known.length === b.cost.lines.length ? round6(known.reduce((a, l) => a + (l.usd ?? 0), 0)) : null;
  if (expectTotal !== b.cost.estimatedTotalUsd)
    problems.push(
      `cost.estimatedTotalUsd ${b.cost.estimatedTotalUsd} != ${expectTotal === null ? "null (a line is unmeasured, or there are none)" : `rounded sum of the lines ${expectTotal}`}`,
    );
  const dates = known
    .map((l) => l.ratesAsOf)
    .filter((d): d is string => !!d)
    .sort();
  if ((dates[0] ?? null) !== b.cost.ratesAsOf) problems.push(`cost.ratesAsOf ${b.cost.ratesAsOf} != oldest contributing date ${dates[0] ?? null}`);
  return { problems, ok };
}

/** `actor engagement`: no live participant claims goal_satisfied with zero actions and zero messages. */
export function actorEngagement(ctx: VerifyContext): CheckOutcome {
  const problems: string[] = [];
  if (ctx.bundle?.mode === "live") {
    for (const [path, t] of ctx.traces) {
      if (t.completionReason !== "goal_satisfied") continue;
      const acted = t.items.some((i) => i.kind === "command" || i.kind === "ui_action" || i.kind === "message" || i.kind === "tool_call");
      const counted = (t.counts.actions ?? 0) + (t.counts.commands ?? 0) + (t.counts.messages ?? 0) > 0;
      if (!acted && !counted) problems.push(`${path}: claims goal_satisfied with zero actions and zero messages`);
    }
  }
  return { problems, ok: "no participant claims success without acting" };
}

/** `verdict consistency`: a pass verdict is what the participants and outcome give, and every live trace passed. */
export function verdictConsistency(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const problems: string[] = [];
  const expect = deriveVerdict(b.mode, b.outcome, b.participants);
  if (b.review.verdict === "pass" && expect !== "pass") problems.push(`verdict pass but participants/outcome give ${expect}`);
  if (b.mode === "live" && b.review.verdict === "pass")
    for (const t of ctx.traces.values()) if (t.status !== "passed") problems.push(`verdict pass but ${t.participantId} trace is ${t.status}`);
  return { problems, ok: `verdict ${b.review.verdict}` };
}
