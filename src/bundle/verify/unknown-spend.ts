/**
 * Unknown model spend, bounded from the bundle's model ledgers. Pure.
 *
 * A request whose cost is unknown (the client went away, the stream broke, no usage came back)
 * was admitted at a worst case (`estimateUsd` on its ledger line), and the gateway admits nothing
 * after it — so a seat's spend is at most its known costs plus those worst cases. A ledger line
 * with an unknown cost and no estimate leaves the spend unbounded.
 */

/** Per participant: the spend bound from its ledgers. */
export interface SpendBound {
  participantId: string;
  /** Requests of unknown cost. */
  unknown: number;
  /** Known cost + unknown requests at their admitted worst case, USD; null when some has no estimate. */
  worstCaseUsd: number | null;
}

interface LedgerLike {
  participantId?: unknown;
  lines?: unknown;
}

/** Bounds of every participant whose model ledger (`model-ledger*.json` anywhere in the bundle) has a request of unknown cost. */
export function unknownSpendBounds(files: ReadonlyMap<string, Uint8Array>): SpendBound[] {
  const by = new Map<string, SpendBound>();
  for (const [path, bytes] of files) {
    if (!/(^|\/)model-ledger[^/]*\.json$/.test(path)) continue;
    let ledger: LedgerLike;
    try {
      ledger = JSON.parse(new TextDecoder().decode(bytes)) as LedgerLike;
    } catch {
      continue; // its own check (artifact digests, schema) reports an unreadable ledger
    }
    if (typeof ledger.participantId !== "string" || !Array.isArray(ledger.lines)) continue;
    let unknown = 0;
    let micros = 0;
    let bounded = true;
    for (const l of ledger.lines as { usd?: unknown; estimateUsd?: unknown }[]) {
      if (typeof l?.usd === "number") micros += Math.round(l.usd * 1e6);
      else if (l?.usd === null) {
        unknown++;
        if (typeof l.estimateUsd === "number") micros += Math.ceil(l.estimateUsd * 1e6);
        else bounded = false;
      }
    }
    if (unknown === 0) continue;
    const prev = by.get(ledger.participantId) ?? { participantId: ledger.participantId, unknown: 0, worstCaseUsd: 0 };
    by.set(ledger.participantId, {
      participantId: ledger.participantId,
      unknown: prev.unknown + unknown,
      worstCaseUsd: bounded && prev.worstCaseUsd !== null ? (Math.round(prev.worstCaseUsd * 1e6) + micros) / 1e6 : null,
    });
  }
  return [...by.values()];
}
