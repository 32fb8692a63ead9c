/**
 * The owned-sandbox ledger and the capacity pool, with in-memory sandboxes (pure logic; the
 * Docker and E2B paths are covered against real engines/SDKs in the other files).
 */
import { describe, expect, test } from "bun:test";
import { SandboxLedger } from "../../src/env/ledger.ts";
import { SlotPool } from "../../src/env/sessions.ts";
import type { ReleaseProof, Sandbox } from "../../src/sandbox/types.ts";

function memorySandbox(id: string, release: () => Promise<ReleaseProof>): Sandbox {
  return {
    id,
    provider: "docker",
    exec: () => Promise.reject(new Error("unused")),
    writeFile: () => Promise.reject(new Error("unused")),
    readFile: () => Promise.reject(new Error("unused")),
    release,
  };
}
const proof = (id: string, outcome: ReleaseProof["outcome"]): ReleaseProof => ({
  id,
  provider: "docker",
  outcome,
  reason: "test",
  at: new Date().toISOString(),
});

describe("SandboxLedger", () => {
  test("released ids leave the ledger; unconfirmed ones stay owned and are retried", async () => {
    const ledger = new SandboxLedger(1000);
    let attempts = 0;
    ledger.noteCreated("a", "docker");
    ledger.attach(memorySandbox("a", async () => proof("a", ++attempts === 1 ? "unconfirmed" : "released")));
    expect(ledger.ids()).toEqual(["a"]);
    expect((await ledger.release("a")).outcome).toBe("unconfirmed");
    expect(ledger.unconfirmedIds()).toEqual(["a"]);
    const retried = await ledger.retryUnconfirmed();
    expect(retried.map((p) => p.outcome)).toEqual(["released"]);
    expect(ledger.ids()).toEqual([]);
  });

  test("a release that never settles hits the outer deadline; a late confirmation still frees the id", async () => {
    const ledger = new SandboxLedger(200);
    let confirm: (p: ReleaseProof) => void = () => undefined;
    ledger.attach(memorySandbox("b", () => new Promise((r) => (confirm = r))));
    // The release never settles by itself: only the outer deadline can end this await.
    const p = await ledger.release("b");
    expect(p).toMatchObject({ id: "b", outcome: "unconfirmed" });
    expect(p.reason).toContain("200 ms");
    expect(ledger.ids()).toEqual(["b"]);
    confirm(proof("b", "released"));
    // The confirmation is handled in promise callbacks, all run before the next event-loop turn.
    await new Promise((r) => setImmediate(r));
    expect(ledger.ids()).toEqual([]);
  });

  test("a throwing release is unconfirmed; concurrent releases of one id are joined", async () => {
    const ledger = new SandboxLedger(1000);
    let calls = 0;
    ledger.attach(
      memorySandbox("c", async () => {
        calls += 1;
        await Bun.sleep(20);
        throw new Error("engine exploded");
      }),
    );
    const [x, y] = await Promise.all([ledger.release("c"), ledger.release("c")]);
    expect(calls).toBe(1);
    expect(x).toMatchObject({ outcome: "unconfirmed" });
    expect(x.reason).toContain("engine exploded");
    expect(y).toEqual(x);
  });

  test("an id reported without a handle is never called released", async () => {
    const ledger = new SandboxLedger(1000);
    ledger.noteCreated("d", "e2b");
    const summary = await ledger.releaseAll();
    expect(summary).toMatchObject({ released: 0, unconfirmed: 1 });
    expect(summary.proofs[0]).toMatchObject({ id: "d", provider: "e2b", outcome: "unconfirmed" });
  });
});

describe("SandboxLedger slot holding", () => {
  test("an unconfirmed id keeps its slot held until a later release confirms it", async () => {
    let attempts = 0;
    const ledger = new SandboxLedger(1000);
    ledger.attach(memorySandbox("u", async () => proof("u", ++attempts === 1 ? "unconfirmed" : "released")));
    const pool = new SlotPool(1, 0);
    const slot = pool.tryAcquire()!;
    expect((await ledger.release("u")).outcome).toBe("unconfirmed");
    ledger.holdUntilConfirmed("u", slot);
    expect(slot.status).toBe("held");
    expect(ledger.heldSlotCount()).toBe(1);
    expect(pool.tryAcquire()).toBeNull();
    const retried = await ledger.retryUnconfirmed();
    expect(retried.map((p) => p.outcome)).toEqual(["released"]);
    expect(slot.status).toBe("free");
    expect(ledger.heldSlotCount()).toBe(0);
    expect(pool.tryAcquire()).not.toBeNull();
  });

  test("a slot handed over for an id that is no longer owned is freed at once", () => {
    const ledger = new SandboxLedger(1000);
    const pool = new SlotPool(1, 0);
    const slot = pool.tryAcquire()!;
    ledger.holdUntilConfirmed("gone", slot);
    expect(slot.status).toBe("free");
    expect(pool.inUse).toBe(0);
  });
});
