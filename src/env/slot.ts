/**
 * One unit of the environment server's capacity, shared by the session pool and each
 * environment (which frees its slot only once its sandbox's release is confirmed).
 */

/** `held`: counts and is not expected to free soon; `releasing`: counts until a release in flight settles; `free`: returned. */
export type SlotStatus = "held" | "releasing" | "free";

/** One unit of capacity. Every transition notifies the pool so that waiting acquirers re-check. */
export class Slot {
  private current: SlotStatus = "held";
  constructor(private readonly onChange: () => void) {}

  get status(): SlotStatus {
    return this.current;
  }

  /** A release that will free this slot is in flight. */
  releasing(): void {
    if (this.current === "held") this.set("releasing");
  }

  /** Back to plain held (e.g. the release came back unconfirmed and the sandbox keeps the slot). */
  hold(): void {
    if (this.current === "releasing") this.set("held");
  }

  /** Gives the slot back. Idempotent. */
  free(): void {
    if (this.current !== "free") this.set("free");
  }

  private set(s: SlotStatus): void {
    this.current = s;
    this.onChange();
  }
}
