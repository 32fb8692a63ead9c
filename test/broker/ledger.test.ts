import { describe, expect, test } from "bun:test";
import {
  type AllocationIdentity,
  BrokerCore,
  type BrokerError,
  encodeRequest,
  isBrokerError,
  LEDGER_SCHEMA,
  MAX_LEDGER_BYTES,
} from "../../src/broker/index.ts";
import { acquire, at, BOOT, codeOf, hex, newCore, OTHER_BOOT, seededEntropy, send, UID, utf8 } from "./support.ts";

const POLICY = { authorizedUids: [UID] };
const ports = (ms = 50_000, bootId = OTHER_BOOT) => ({ entropy: seededEntropy(9), clock: at(ms, bootId) });

function restoreFails(bytes: Uint8Array): void {
  let err: unknown;
  try {
    BrokerCore.restore(bytes, POLICY, ports());
  } catch (e) {
    err = e;
  }
  expect(isBrokerError(err, "invalid_ledger")).toBe(true);
}

/** A core with: a live study holding a present and a creating allocation, a revoked study, an absent tombstone. */
function populated() {
  const core = newCore({ perStudy: 3 });
  const live = acquire(core, hex(1));
  const dead = acquire(core, hex(2));
  const ids: AllocationIdentity[] = [];
  for (const n of [10, 11, 12])
    ids.push(send(core, { operation: "allocate", study: live.study, capability: live.token, attempt: hex(n) }).effects[0]!.identity);
  core.beginAllocation(ids[0]!);
  core.recordOutcome(ids[0]!, "present");
  core.beginAllocation(ids[1]!);
  core.confirmAbsent({ identity: ids[2]!, creationQuiescent: true });
  const deadAlloc = send(core, { operation: "allocate", study: dead.study, capability: dead.token, attempt: hex(20) }).effects[0]!.identity;
  send(core, { operation: "release", study: dead.study, capability: dead.token });
  return { core, live, dead, ids, deadAlloc };
}

describe("dumpLedger", () => {
  test("holds capability hashes only, keeps tombstones, and stays compact", () => {
    const { core, live, dead } = populated();
    const bytes = core.dumpLedger();
    const text = new TextDecoder().decode(bytes);
    expect(text).not.toContain(live.token);
    expect(text).not.toContain(dead.token);
    const doc = JSON.parse(text);
    expect(doc.schema).toBe(LEDGER_SCHEMA);
    expect(doc.studies).toHaveLength(2);
    expect(doc.studies[0].capability_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.studies[0].allocations.map((a: { state: string }) => a.state)).toEqual(["present", "creating", "absent"]);
    expect(doc.studies[1].state).toBe("revoked");
    expect(bytes.byteLength).toBeLessThan(MAX_LEDGER_BYTES);
  });

  test("a ledger at its largest (64 studies × 32 attempts) stays under 1 MiB", () => {
    const core = newCore({ maxStudies: 64, maxAttemptsPerStudy: 32, perStudy: 4, globalSlots: 8 });
    for (let s = 0; s < 64; s++) {
      const st = acquire(core, hex(s + 1));
      for (let n = 0; n < 32; n++) {
        const d = send(core, { operation: "allocate", study: st.study, capability: st.token, attempt: hex(1000 + n) });
        core.confirmAbsent({ identity: d.effects[0]!.identity, creationQuiescent: true });
      }
      send(core, { operation: "release", study: st.study, capability: st.token });
    }
    const bytes = core.dumpLedger();
    expect(bytes.byteLength).toBeLessThan(MAX_LEDGER_BYTES);
    const restored = BrokerCore.restore(bytes, POLICY, ports());
    expect(restored.studies()).toHaveLength(64);
    expect(codeOf(restored.handle(encodeRequest({ operation: "acquire", attempt: hex(1) }), { peerUid: UID, clock: at(50_000, OTHER_BOOT) }))).toBe("ok");
  });
});

describe("restore", () => {
  test("yields a reconciliation-only core: live leases terminal, held slots releasing, tokens powerless", () => {
    const { core, live, ids, deadAlloc } = populated();
    const restored = BrokerCore.restore(core.dumpLedger(), POLICY, ports());
    expect(restored.mode).toBe("reconciliation");
    expect(restored.installation).toBe(core.installation);
    const [s0, s1] = restored.studies();
    expect(s0!.state).toBe("recovery");
    expect(s0!.allocations.map((a) => a.state)).toEqual(["releasing", "releasing", "absent"]);
    expect(s1!.state).toBe("revoked");
    expect(restored.usage().global).toBe(3);
    const hello = restored.handle(encodeRequest({ operation: "hello" }), { peerUid: UID, clock: at(50_000, OTHER_BOOT) });
    expect(hello.reply).toEqual({ ok: true, operation: "hello", version: 1, mode: "reconciliation" });
    for (const req of [
      { operation: "inspect", study: live.study, capability: live.token },
      { operation: "renew", study: live.study, capability: live.token, sequence: 7 },
      { operation: "allocate", study: live.study, capability: live.token, attempt: hex(30) },
      { operation: "acquire", attempt: hex(50) },
    ] as const)
      expect(codeOf(restored.handle(encodeRequest(req), { peerUid: UID, clock: at(50_000, OTHER_BOOT) }))).toBe("reconciliation_required");
    // The acquire attempt of the old live study is a replay: the same (now terminal) view, no capability.
    const replay = restored.handle(encodeRequest({ operation: "acquire", attempt: hex(1) }), { peerUid: UID, clock: at(50_000, OTHER_BOOT) });
    expect(replay.capability).toBeUndefined();
    expect(replay.reply.ok && "study" in replay.reply && replay.reply.study.state).toBe("recovery");
    // Cleanup works by the original identities; the open creation's outcome is still accepted.
    const stops = restored.pendingCleanup().map((e) => e.identity.allocation);
    expect(stops).toEqual([ids[0]!.allocation, ids[1]!.allocation, deadAlloc.allocation]);
    expect(restored.recordOutcome(ids[1]!, "present").state).toBe("releasing");
    for (const id of [ids[0]!, ids[1]!, deadAlloc]) restored.confirmAbsent({ identity: id, creationQuiescent: true });
    expect(restored.pendingCleanup()).toEqual([]);
    expect(restored.usage().global).toBe(0);
    throwsOwner(() => restored.activate(live.study));
  });

  test("a restored core's own dump restores again to the same ledger", () => {
    const { core } = populated();
    const once = BrokerCore.restore(core.dumpLedger(), POLICY, ports());
    const twice = BrokerCore.restore(once.dumpLedger(), POLICY, ports(60_000));
    expect(twice.studies()).toEqual(once.studies());
    expect(twice.mode).toBe("reconciliation");
  });

  test("malformed, oversize, tampered or inconsistent ledgers are invalid_ledger", () => {
    const { core } = populated();
    const good = JSON.parse(new TextDecoder().decode(core.dumpLedger()));
    const enc = (doc: unknown) => utf8(JSON.stringify(doc));
    const edit = (fn: (d: typeof good) => void) => {
      const d = structuredClone(good);
      fn(d);
      return enc(d);
    };
    restoreFails(new Uint8Array());
    restoreFails(utf8("{"));
    restoreFails(new Uint8Array([0xff, 0xfe]));
    restoreFails(new Uint8Array(MAX_LEDGER_BYTES + 1).fill(0x20));
    restoreFails(edit((d) => (d.schema = "other")));
    restoreFails(edit((d) => (d.extra = 1)));
    restoreFails(edit((d) => (d.studies[0].token = "0".repeat(64))));
    restoreFails(edit((d) => (d.studies[0].capability_hash = "x")));
    restoreFails(edit((d) => (d.studies[0].state = "alive")));
    restoreFails(edit((d) => (d.studies[0].allocations[0].state = "gone")));
    restoreFails(edit((d) => (d.studies[0].created_ms = 1.5)));
    restoreFails(edit((d) => d.studies.push(d.studies[0])));
    restoreFails(edit((d) => (d.studies[1].attempt = d.studies[0].attempt)));
    restoreFails(edit((d) => d.studies[0].allocations.push(d.studies[0].allocations[0])));
    restoreFails(edit((d) => (d.studies[1].allocations[0].state = "present"))); // terminal study holding a live-state slot
    restoreFails(edit((d) => (d.studies[0].allocations[0].creation_open = true))); // open creation on a present slot
    let err: unknown;
    try {
      BrokerCore.restore(core.dumpLedger(), POLICY, { entropy: seededEntropy(1), clock: { bootId: BOOT } as never });
    } catch (e) {
      err = e;
    }
    expect((err as BrokerError).brokerCode).toBe("invalid_clock");
  });
});

function throwsOwner(fn: () => unknown): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isBrokerError(err, "invalid_owner_fact")).toBe(true);
}
