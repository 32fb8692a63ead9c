/**
 * The spend cap, enforced before the spend. Pure: no I/O, no clock.
 *
 * A budget holds the known spend (settled requests), the worst cases of requests in flight
 * (reserved at admission), and whether any settled request's cost is unknown. A request is
 * admitted only when known + reserved + its own worst case stays within the cap; once any cost is
 * unknown, nothing more is admitted (the cap could already be passed). A cap of 0 admits nothing.
 * `null` cap: no limit from this budget (a positive cap still needs a priced estimate).
 */

/** Why a request was refused. */
export type RefusalReason =
  /** The cap is 0: no request may leave. */
  | "cap_zero"
  /** Known spend + in-flight worst cases + this request's worst case would pass the cap. */
  | "would_exceed"
  /** An earlier request's cost is unknown, so the spend so far cannot be bounded. */
  | "spend_unknown"
  /** The request's model has no price, so its worst case cannot be bounded. */
  | "unpriced";

export type Admission =
  | { ok: true; ticket: number }
  | { ok: false; reason: RefusalReason; budget: string; capUsd: number; knownUsd: number; estimateUsd: number | null };

/** One spend budget (a seat's `maxUsd`, or a study's `maxTotalUsd` shared by its seats). */
export class SpendBudget {
  private knownMicros = 0;
  private unknown = false;
  private readonly inFlight = new Map<number, number>();
  private nextTicket = 1;

  /**
   * @param label what the cap is, for messages (`scenario.caps.maxUsd`).
   * @param capUsd the cap in USD, or null for no cap from this budget.
   */
  constructor(
    readonly label: string,
    readonly capUsd: number | null,
  ) {}

  /** Known settled spend, USD. */
  get knownUsd(): number {
    return this.knownMicros / 1e6;
  }
  /** True once a settled request's cost was unknown. */
  get spendUnknown(): boolean {
    return this.unknown;
  }

  /** Checks a request whose worst case is `estimateUsd` (null = unpriced) without reserving. */
  check(estimateUsd: number | null): Admission | { ok: true; ticket: 0 } {
    if (this.capUsd === null) return { ok: true, ticket: 0 };
    const deny = (reason: RefusalReason): Admission => ({
      ok: false,
      reason,
      budget: this.label,
      capUsd: this.capUsd ?? 0,
      knownUsd: this.knownUsd,
      estimateUsd,
    });
    if (this.capUsd === 0) return deny("cap_zero");
    if (this.unknown) return deny("spend_unknown");
    if (estimateUsd === null) return deny("unpriced");
    let reserved = 0;
    for (const v of this.inFlight.values()) reserved += v;
    if (this.knownMicros + reserved + Math.ceil(estimateUsd * 1e6) > Math.floor(this.capUsd * 1e6)) return deny("would_exceed");
    return { ok: true, ticket: 0 };
  }

  /** Reserves `estimateUsd` (already checked) and returns its ticket. */
  reserve(estimateUsd: number | null): number {
    const t = this.nextTicket++;
    this.inFlight.set(t, estimateUsd === null ? 0 : Math.ceil(estimateUsd * 1e6));
    return t;
  }

  /** Settles a ticket with the request's real cost (null = unknown: no more admissions). */
  settle(ticket: number, usd: number | null): void {
    this.inFlight.delete(ticket);
    if (usd === null) this.unknown = true;
    else this.knownMicros += Math.round(usd * 1e6);
  }
}

/**
 * Admits a request against every budget at once: all must accept, then each reserves.
 * @returns the tickets (one per budget, same order), or the first refusal.
 */
export function admitAll(budgets: readonly SpendBudget[], estimateUsd: number | null): { ok: true; tickets: number[] } | Extract<Admission, { ok: false }> {
  for (const b of budgets) {
    const a = b.check(estimateUsd);
    if (!a.ok) return a;
  }
  return { ok: true, tickets: budgets.map((b) => b.reserve(estimateUsd)) };
}
