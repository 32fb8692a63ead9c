/**
 * Seat slots for the study runner: the part of the capacity ledger it calls, and a plain counter
 * of it for studies whose machines are remote (E2B sandboxes) — pure, no I/O. A remote slot is
 * held from `reserve` until `confirmAbsent` (a confirmed release); a slot whose release was never
 * confirmed stays held, so a study leaking sandboxes slows down instead of piling up more. There
 * is no lease to renew: nothing on this host is shared with other studies.
 */
import type { ClockSample } from "../broker/clock.ts";
import type { CreationOutcome } from "../broker/owner-ops.ts";

/** What the runner needs of its slots (the capacity ledger satisfies it). */
export interface SeatSlots {
  readonly mode: string;
  activate(): void;
  renew(): unknown;
  advance(clock: ClockSample): readonly unknown[];
  reserve(seatId: string): { ok: true } | { ok: false; code: string };
  beginCreate(seatId: string): unknown;
  recordOutcome(seatId: string, outcome: CreationOutcome): unknown;
  confirmAbsent(seatId: string): unknown;
  release(): unknown;
  usage(): { used: number; perStudy: number };
}

/** `limit` remote slots (at least 1). */
export function remoteSlots(limit: number): SeatSlots {
  const held = new Set<string>();
  const cap = Math.max(1, limit);
  return {
    mode: "accepting",
    activate() {},
    renew: () => undefined,
    advance: () => [],
    reserve(seatId) {
      if (!held.has(seatId) && held.size >= cap) return { ok: false, code: "capacity_exhausted" };
      held.add(seatId);
      return { ok: true };
    },
    beginCreate: () => undefined,
    recordOutcome: () => undefined,
    confirmAbsent: (seatId) => held.delete(seatId),
    release: () => [],
    usage: () => ({ used: held.size, perStudy: cap }),
  };
}
