/**
 * The spend cap, enforced before the spend. Pure: no I/O, no clock.
 *
 * A budget holds the known spend (settled requests), the worst cases of requests in flight
 * (reserved at admission), and whether any settled request's cost is unknown. A request is
 * admitted only when known + reserved + its own worst case stays within the cap; once any cost is
 * unknown, nothing more is admitted (the cap could already be passed) and that request's worst
 * case stays reserved, so {@link SpendBudget.worstCaseUsd} still bounds what was spent. A cap of 0
 * admits nothing. `null` cap: no limit from this budget (a positive cap still needs a priced
 * estimate).
 *
 * A budget may be shared (a study's `maxTotalUsd` by every seat's gateway): each gateway that
 * checks it attaches, and {@link SpendBudget.grantableUsd} offers one request only its share of
 * what is left, so one seat's request cannot take the whole budget before another seat's first.
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
  /** Worst cases of requests whose cost turned out unknown, micro-USD. */
  private unknownMicros = 0;
  private readonly inFlight = new Map<number, number>();
  private nextTicket = 1;
  private sharers = 0;

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
  /** The most that can have been spent: known + in-flight and unknown requests at their worst case, USD. */
  get worstCaseUsd(): number {
    return (this.knownMicros + this.reservedMicros() + this.unknownMicros) / 1e6;
  }

  /** Registers one more client sharing this budget (a seat's gateway); returns its detach. */
  attach(): () => void {
    this.sharers++;
    let attached = true;
    return () => {
      if (attached) this.sharers--;
      attached = false;
    };
  }

  /**
   * The most one new request may reserve here, USD: what is left (cap − known − reserved)
   * divided among the clients attached (at least 1). `null`: no limit; 0 once spend is unknown.
   */
  grantableUsd(): number | null {
    if (this.capUsd === null) return null;
    if (this.unknown) return 0;
    const left = Math.max(0, Math.floor(this.capUsd * 1e6) - this.knownMicros - this.reservedMicros());
    return Math.floor(left / Math.max(1, this.sharers)) / 1e6;
  }

  private reservedMicros(): number {
    let reserved = 0;
    for (const v of this.inFlight.values()) reserved += v;
    return reserved;
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
    if (this.knownMicros + this.reservedMicros() + Math.ceil(estimateUsd * 1e6) > Math.floor(this.capUsd * 1e6)) return deny("would_exceed");
    return { ok: true, ticket: 0 };
  }

  /** Reserves `estimateUsd` (already checked) and returns its ticket. */
  reserve(estimateUsd: number | null): number {
    const t = this.nextTicket++;
    this.inFlight.set(t, estimateUsd === null ? 0 : Math.ceil(estimateUsd * 1e6));
    return t;
  }

  /**
   * Settles a ticket with the request's real cost. `null` = unknown: the reservation is kept at
   * its worst case and no further request is admitted.
   */
  settle(ticket: number, usd: number | null): void {
    const reserved = this.inFlight.get(ticket) ?? 0;
    this.inFlight.delete(ticket);
    if (usd === null) {
      this.unknown = true;
      this.unknownMicros += reserved;
    } else this.knownMicros += Math.round(usd * 1e6);
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

/** The most one new request may reserve across `budgets`, USD (the smallest grant; null: no limit). */
export function grantableUsd(budgets: readonly SpendBudget[]): number | null {
  let least: number | null = null;
  for (const b of budgets) {
    const g = b.grantableUsd();
    if (g !== null && (least === null || g < least)) least = g;
  }
  return least;
}
