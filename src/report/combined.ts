/**
 * The report's "Combined result" of a continued run (`lab run --rerun-failed-from`): the chain of
 * runs it ends, verified and followed back, read as one study — each seat counted once by its
 * last attempt, its earlier attempts listed beside it (src/bundle/combined.ts). When the chain
 * cannot be followed (an earlier run is missing, changed, or does not verify) the section says
 * why and shows no combined number.
 */
import { combineChain, defaultTrust, loadVerifiedChain, type RunBundle, type SeatAttempt } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";

/** One attempt as the report lists it. */
export interface ReportAttempt {
  runId: string;
  status: string;
  completionReason: string;
  counted: "goal" | "finding" | "harness";
}

/** The combined result the report shows, or why there is none. */
export interface ReportCombined {
  /** The run this one continues, and which seats it reran by which rule. */
  continues: { runId: string; which: string; seats: string[] };
  /** `7/8 reached the goal …`; null when the chain could not be followed. */
  line: string | null;
  runIds: string[];
  seats: { id: string; last: ReportAttempt; earlier: ReportAttempt[] }[];
  /** Why no combined result is shown. */
  unavailable?: string;
}

function attempt(a: SeatAttempt): ReportAttempt {
  return { runId: a.runId, status: a.participant.status, completionReason: a.participant.completionReason ?? "none", counted: a.counted };
}

/** The combined result of the run at `runDir` with bundle `b`; undefined when it continues nothing. */
export async function loadCombined(runDir: string, b: RunBundle): Promise<ReportCombined | undefined> {
  if (!b.continues) return undefined;
  const continues = { runId: b.continues.runId, which: b.continues.which, seats: b.continues.seats };
  try {
    const c = combineChain((await loadVerifiedChain(runDir, defaultTrust())).chain);
    return { continues, line: c.line, runIds: c.runIds, seats: c.seats.map((s) => ({ id: s.id, last: attempt(s.last), earlier: s.earlier.map(attempt) })) };
  } catch (e) {
    const why = e instanceof HumanishError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
    return { continues, line: null, runIds: [b.runId], seats: [], unavailable: why };
  }
}

function attemptText(a: ReportAttempt): string {
  return `${a.status} (${a.completionReason}) in ${a.runId}${a.counted === "harness" ? " — harness failure, not a finding" : ""}`;
}

/** The section body; `e` escapes untrusted text for HTML. */
export function renderCombined(c: ReportCombined, e: (s: string) => string): string {
  const head = `<p>This run continues <code>${e(c.continues.runId)}</code>: it reran ${e(c.continues.seats.join(", "))} (${c.continues.which === "harness" ? "seats that failed as a harness" : "seats that did not reach the goal"}).</p>`;
  if (c.line === null)
    return `${head}<p class="bad" id="combined-unavailable">No combined result: ${e(c.unavailable ?? "the earlier runs could not be read")}</p>`;
  const caveat =
    c.continues.which === "not-reached"
      ? `<p class="meta">Seats that did not reach the goal were given another attempt and the others none, so this rate reads higher than one attempt each.</p>`
      : "";
  const rows = c.seats
    .map(
      (s) =>
        `<tr><td><code>${e(s.id)}</code></td><td>${e(attemptText(s.last))}</td><td>${s.earlier.length ? s.earlier.map((a) => e(attemptText(a))).join("<br>") : "—"}</td></tr>`,
    )
    .join("");
  return `${head}<div class="line" id="combined-line">${e(c.line)}</div>${caveat}<table><thead><tr><th>seat</th><th>counted: last attempt</th><th>earlier attempts (not counted)</th></tr></thead><tbody>${rows}</tbody></table>`;
}
