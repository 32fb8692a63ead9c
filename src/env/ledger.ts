/**
 * The server's ledger of owned sandboxes: every resource is released by its exact id with a
 * recorded outcome.
 *
 * An id enters the ledger the moment the provider reports it (`onCreated`, before any setup
 * command) and leaves it only when its release is `released`. A release that is not confirmed
 * keeps the id owned so it can be retried (by the reaper tick and at shutdown) and reported; it
 * is never forgotten and never replaced silently. Every release has an outer deadline, because
 * a provider call that never settles must not hang a reset or the shutdown.
 */
import type { ReleaseProof, Sandbox } from "../sandbox/types.ts";

/** A capacity slot the ledger keeps held for an unconfirmed sandbox (see sessions.ts). */
export interface HeldSlot {
  hold(): void;
  free(): void;
}

/** One owned sandbox: its exact id and, once the provider returned it, its handle. */
interface OwnedSandbox {
  id: string;
  provider: "docker" | "e2b";
  sandbox: Sandbox | null;
  /** The last unconfirmed proof, if a release was tried. */
  lastProof: ReleaseProof | null;
  releasing: Promise<ReleaseProof> | null;
  /** Capacity slots held until this id's release is confirmed. */
  slots: HeldSlot[];
}

/** Summary of releasing everything (shutdown). */
export interface ReleaseSummary {
  proofs: ReleaseProof[];
  released: number;
  unconfirmed: number;
  retained: number;
}

/** Default outer deadline for one release, in ms. */
export const DEFAULT_RELEASE_DEADLINE_MS = 30_000;

/** Tracks every sandbox the server owns, by exact id. */
export class SandboxLedger {
  private readonly owned = new Map<string, OwnedSandbox>();

  constructor(private readonly releaseDeadlineMs: number = DEFAULT_RELEASE_DEADLINE_MS) {}

  /** Records an id as owned (called from `onCreated`, before any provisioning). */
  noteCreated(id: string, provider: "docker" | "e2b"): void {
    if (!this.owned.has(id)) this.owned.set(id, { id, provider, sandbox: null, lastProof: null, releasing: null, slots: [] });
  }

  /** Attaches the provider's handle to an owned id (adds it if `onCreated` was not called). */
  attach(sandbox: Sandbox): void {
    const entry = this.owned.get(sandbox.id);
    if (entry) entry.sandbox = sandbox;
    else this.owned.set(sandbox.id, { id: sandbox.id, provider: sandbox.provider, sandbox, lastProof: null, releasing: null, slots: [] });
  }

  /**
   * Keeps `slot` held for as long as `id` is owned (its release not confirmed), and frees it the
   * moment a later release (a reaper retry, shutdown, or a late answer) confirms it. An id that is
   * no longer owned frees the slot at once.
   */
  holdUntilConfirmed(id: string, slot: HeldSlot): void {
    const entry = this.owned.get(id);
    if (!entry) {
      slot.free();
      return;
    }
    slot.hold();
    entry.slots.push(slot);
  }

  /** Slots held for unconfirmed sandboxes. */
  heldSlotCount(): number {
    let n = 0;
    for (const e of this.owned.values()) n += e.slots.length;
    return n;
  }

  /** Drops a confirmed id and gives back the slots it held. */
  private confirm(entry: OwnedSandbox): void {
    if (this.owned.get(entry.id) === entry) this.owned.delete(entry.id);
    for (const s of entry.slots.splice(0)) s.free();
  }

  /** Ids currently owned (live, or pending a confirmed release). */
  ids(): string[] {
    return [...this.owned.keys()];
  }

  /** Ids whose release was tried and not confirmed. */
  unconfirmedIds(): string[] {
    return [...this.owned.values()].filter((e) => e.lastProof !== null).map((e) => e.id);
  }

  /**
   * Releases one owned sandbox by exact id with the outer deadline. Never throws. A release
   * already in progress is joined, not repeated.
   */
  release(id: string): Promise<ReleaseProof> {
    const entry = this.owned.get(id);
    if (!entry) {
      return Promise.resolve({ id, provider: "docker", outcome: "released", reason: "not-owned (already released)", at: new Date().toISOString() });
    }
    if (entry.releasing) return entry.releasing;
    const run = this.releaseEntry(entry).finally(() => {
      entry.releasing = null;
    });
    entry.releasing = run;
    return run;
  }

  private async releaseEntry(entry: OwnedSandbox): Promise<ReleaseProof> {
    const at = new Date().toISOString();
    if (!entry.sandbox) {
      const proof: ReleaseProof = {
        id: entry.id,
        provider: entry.provider,
        outcome: "unconfirmed",
        reason: "the provider reported this id but returned no handle to release it; remove it by this exact id",
        at,
      };
      entry.lastProof = proof;
      return proof;
    }
    const sandbox = entry.sandbox;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<ReleaseProof>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            id: entry.id,
            provider: entry.provider,
            outcome: "unconfirmed",
            reason: `release did not settle within ${this.releaseDeadlineMs} ms`,
            at,
          }),
        this.releaseDeadlineMs,
      );
    });
    const attempt = sandbox.release().then(
      (proof) => {
        // A late confirmation still counts: drop the id once the provider confirms it.
        if (proof.outcome === "released") this.confirm(entry);
        return proof;
      },
      (e: unknown): ReleaseProof => ({
        id: entry.id,
        provider: entry.provider,
        outcome: "unconfirmed",
        reason: `release threw: ${(e as Error)?.message ?? String(e)}`,
        at,
      }),
    );
    const proof = await Promise.race([attempt, deadline]);
    clearTimeout(timer);
    if (proof.outcome === "released") this.confirm(entry);
    else entry.lastProof = proof;
    return proof;
  }

  /** Retries every id whose release was not confirmed. */
  async retryUnconfirmed(): Promise<ReleaseProof[]> {
    const ids = this.unconfirmedIds();
    return Promise.all(ids.map((id) => this.release(id)));
  }

  /** Releases everything owned (shutdown). */
  async releaseAll(): Promise<ReleaseSummary> {
    const proofs = await Promise.all(this.ids().map((id) => this.release(id)));
    return summarize(proofs);
  }
}

/** Counts outcomes of a list of proofs. */
export function summarize(proofs: ReleaseProof[]): ReleaseSummary {
  return {
    proofs,
    released: proofs.filter((p) => p.outcome === "released").length,
    unconfirmed: proofs.filter((p) => p.outcome === "unconfirmed").length,
    retained: proofs.filter((p) => p.outcome === "retained").length,
  };
}
