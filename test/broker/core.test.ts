import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  type AllocationIdentity,
  BROKER_ERROR_CODES,
  BrokerCore,
  BrokerError,
  type BrokerErrorCode,
  type Decision,
  type Effect,
  encodeRequest,
  isBrokerError,
  type StudyView,
} from "../../src/broker/index.ts";
import { acquire, at, BOOT, codeOf, hex, newCore, OTHER_BOOT, OTHER_UID, seededEntropy, send, UID, utf8 } from "./support.ts";

const INSTALLATION = "a".repeat(32);

function throwsCode(fn: () => unknown, code: BrokerErrorCode): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isBrokerError(err)).toBe(true);
  expect((err as BrokerError).brokerCode).toBe(code);
}

function viewOf(d: Decision): StudyView {
  if (!d.reply.ok || !("study" in d.reply)) throw new Error(`no study view: ${JSON.stringify(d.reply)}`);
  return d.reply.study;
}

/** A core with one study holding one allocation; returns everything a test needs. */
function withAllocation(policy = {}) {
  const core = newCore(policy);
  const { study, token } = acquire(core);
  const d = send(core, { operation: "allocate", study, capability: token, attempt: hex(10) });
  if (!d.reply.ok || d.reply.operation !== "allocate") throw new Error("allocate failed");
  const identity: AllocationIdentity = { installation: INSTALLATION, boot: BOOT, study, allocation: d.reply.allocation.allocation };
  return { core, study, token, identity, decision: d };
}

describe("hello and authorization", () => {
  test("hello reports version 1 and the mode", () => {
    const core = newCore();
    expect(send(core, { operation: "hello" }).reply).toEqual({ ok: true, operation: "hello", version: 1, mode: "accepting" });
    core.advance(at(2000, OTHER_BOOT));
    expect(send(core, { operation: "hello" }, 2000, UID, OTHER_BOOT).reply).toEqual({ ok: true, operation: "hello", version: 1, mode: "reconciliation" });
  });

  test("the default policy authorizes nobody", () => {
    const core = BrokerCore.create({}, { entropy: seededEntropy(1), clock: at(0) });
    expect(core.handle(encodeRequest({ operation: "hello" }), { peerUid: 0, clock: at(0) }).reply).toEqual({ ok: false, error: "unauthorized" });
  });

  test("an unauthorized peer is refused before decoding and before its clock is applied: nothing changes", () => {
    const core = newCore();
    const d = core.handle(utf8("not json at all"), { peerUid: 4242, clock: at(5000, OTHER_BOOT) });
    expect(d).toEqual({ reply: { ok: false, error: "unauthorized" }, effects: [] });
    expect(core.mode).toBe("accepting");
    for (const uid of [-1, 1.5, Number.NaN, "1000"])
      expect(codeOf(core.handle(encodeRequest({ operation: "hello" }), { peerUid: uid as number, clock: at(1000) }))).toBe("unauthorized");
  });

  test("a malformed clock sample is invalid_clock; malformed bytes are invalid_request", () => {
    const core = newCore();
    for (const clock of [
      { bootId: "B".repeat(32), boottimeMs: 1, sleepDetected: false },
      { bootId: BOOT, boottimeMs: -1, sleepDetected: false },
      { bootId: BOOT, boottimeMs: 1.5, sleepDetected: false },
      { bootId: BOOT, boottimeMs: 2 ** 53, sleepDetected: false },
      { bootId: BOOT, boottimeMs: 1, sleepDetected: "no" },
      null,
    ])
      expect(codeOf(core.handle(encodeRequest({ operation: "hello" }), { peerUid: UID, clock: clock as never }))).toBe("invalid_clock");
    throwsCode(() => core.advance({ bootId: BOOT } as never), "invalid_clock");
    expect(codeOf(core.handle(utf8("{}"), { peerUid: UID, clock: at(1000) }))).toBe("invalid_request");
  });

  test("refusals carry the code only, and each code has a fixed HUMANISH_BROKER_* error with a next step", () => {
    const core = newCore();
    const d = core.handle(utf8('{"version":1,"operation":"<script>"}'), { peerUid: UID, clock: at(1000) });
    expect(d.reply).toEqual({ ok: false, error: "invalid_request" });
    expect(JSON.stringify(d)).not.toContain("script");
    for (const code of BROKER_ERROR_CODES) {
      const e = new BrokerError(code, "body");
      expect(e.code).toBe(`HUMANISH_BROKER_${code.toUpperCase()}`);
      expect(e.next?.length).toBeGreaterThan(10);
      expect(e.toJSON()).toMatchObject({ code: e.code, details: { brokerCode: code, field: "body" } });
    }
  });
});

describe("acquire", () => {
  test("mints a study and a capability; deadlines from now and the caps; only the hash is kept", () => {
    const core = newCore();
    const d = send(core, { operation: "acquire", attempt: hex(1) }, 5000);
    expect(d.capability).toBeDefined();
    const view = viewOf(d);
    expect(view).toEqual({
      study: d.capability!.study,
      state: "startup",
      sequence: 0,
      startup_deadline_ms: 65_000,
      study_deadline_ms: 1_805_000,
      lease_deadline_ms: 25_000,
      allocations: [],
    });
    expect(view.study).toMatch(/^[0-9a-f]{32}$/);
    const token = d.capability!.reveal();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const tuple = JSON.stringify(["humanish-broker-capability-v1", INSTALLATION, BOOT, view.study, UID, 5000, 65_000, 1_805_000, token]);
    const expected = createHash("sha256").update(tuple).digest("hex");
    const dump = new TextDecoder().decode(core.dumpLedger());
    expect(dump).toContain(expected);
    expect(dump).not.toContain(token);
  });

  test("the lease never outlives the startup cap", () => {
    const core = newCore({ ttlMs: 60_000, startupCapMs: 10_000 });
    expect(viewOf(send(core, { operation: "acquire", attempt: hex(1) }, 1000)).lease_deadline_ms).toBe(11_000);
  });

  test("the capability is redacted everywhere and revealed exactly once", () => {
    const d = send(newCore(), { operation: "acquire", attempt: hex(1) });
    const cap = d.capability!;
    for (const shown of [String(cap), JSON.stringify(d), Bun.inspect(cap), Bun.inspect(d), `${cap}`]) {
      expect(shown).toContain("<redacted>");
      expect(shown).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(cap.revealable).toBe(true);
    const token = cap.reveal();
    expect(cap.revealable).toBe(false);
    throwsCode(() => cap.reveal(), "invalid_capability");
    expect(Bun.inspect(d)).not.toContain(token);
  });

  test("a replay by the same uid and attempt returns the same study's view and no capability", () => {
    const core = newCore();
    const first = acquire(core);
    const again = send(core, { operation: "acquire", attempt: hex(1) }, 2000);
    expect(again.capability).toBeUndefined();
    expect(viewOf(again)).toEqual(viewOf(first.decision));
    const other = send(core, { operation: "acquire", attempt: hex(1) }, 2000, OTHER_UID);
    expect(other.capability).toBeDefined();
    expect(other.capability!.study).not.toBe(first.study);
    expect(core.studies()).toHaveLength(2);
  });

  test("refused in reconciliation (a replay still answers), and at max studies counting tombstones", () => {
    const core = newCore({ maxStudies: 2 });
    const a = acquire(core, hex(1));
    acquire(core, hex(2));
    send(core, { operation: "release", study: a.study, capability: a.token });
    expect(codeOf(send(core, { operation: "acquire", attempt: hex(3) }))).toBe("ledger_full");
    core.advance(at(2000, BOOT, true));
    expect(codeOf(send(core, { operation: "acquire", attempt: hex(3) }, 2000))).toBe("reconciliation_required");
    const replay = send(core, { operation: "acquire", attempt: hex(1) }, 2000);
    expect(viewOf(replay).state).toBe("revoked");
    expect(replay.capability).toBeUndefined();
  });

  test("entropy that fails, returns the wrong length or repeats a study id is entropy_failed and changes nothing", () => {
    const broken = BrokerCore.create(
      { authorizedUids: [UID] },
      {
        entropy: () => {
          throw new Error("no entropy");
        },
        clock: at(0),
        installation: INSTALLATION,
      },
    );
    expect(codeOf(send(broken, { operation: "acquire", attempt: hex(1) }, 0))).toBe("entropy_failed");
    const short = BrokerCore.create({ authorizedUids: [UID] }, { entropy: (n) => new Uint8Array(n - 1), clock: at(0), installation: INSTALLATION });
    expect(codeOf(send(short, { operation: "acquire", attempt: hex(1) }, 0))).toBe("entropy_failed");
    const constant = BrokerCore.create({ authorizedUids: [UID] }, { entropy: (n) => new Uint8Array(n), clock: at(0), installation: INSTALLATION });
    expect(codeOf(send(constant, { operation: "acquire", attempt: hex(1) }, 0))).toBe("ok");
    expect(codeOf(send(constant, { operation: "acquire", attempt: hex(2) }, 0))).toBe("entropy_failed");
    expect(constant.studies()).toHaveLength(1);
    throwsCode(() => BrokerCore.create({}, { entropy: () => new Uint8Array(3), clock: at(0) }), "entropy_failed");
    throwsCode(() => BrokerCore.create({}, { entropy: seededEntropy(1), clock: at(0), installation: "xyz" }), "invalid_owner_fact");
  });
});

describe("authentication of study operations", () => {
  test("wrong token, other uid and unknown study are invalid_capability; reconciliation wins over a valid token", () => {
    const core = newCore();
    const { study, token } = acquire(core);
    const wrong = token.replace(/^./, token[0] === "0" ? "1" : "0");
    expect(codeOf(send(core, { operation: "inspect", study, capability: wrong }))).toBe("invalid_capability");
    expect(codeOf(send(core, { operation: "inspect", study, capability: token }, 1000, OTHER_UID))).toBe("invalid_capability");
    expect(codeOf(send(core, { operation: "inspect", study: hex(99), capability: token }))).toBe("invalid_capability");
    expect(codeOf(send(core, { operation: "inspect", study, capability: token }))).toBe("ok");
    core.advance(at(900));
    for (const op of ["inspect", "release"] as const)
      expect(codeOf(send(core, { operation: op, study, capability: token }, 900))).toBe("reconciliation_required");
    expect(codeOf(send(core, { operation: "renew", study, capability: token, sequence: 5 }, 900))).toBe("reconciliation_required");
    expect(codeOf(send(core, { operation: "allocate", study, capability: token, attempt: hex(4) }, 900))).toBe("reconciliation_required");
  });
});

describe("renew", () => {
  test("extends the lease to min(now+ttl, study cap, startup cap while in startup); sequences strictly increase", () => {
    const core = newCore({ ttlMs: 20_000, startupCapMs: 30_000, studyCapMs: 50_000 });
    const { study, token } = acquire(core);
    const renew = (sequence: number, ms: number) => send(core, { operation: "renew", study, capability: token, sequence }, ms);
    expect(viewOf(renew(1, 5000)).lease_deadline_ms).toBe(25_000);
    expect(viewOf(renew(2, 15_000)).lease_deadline_ms).toBe(31_000); // startup deadline 1000 + 30000
    expect(codeOf(renew(2, 16_000))).toBe("sequence_replayed");
    expect(codeOf(renew(1, 16_000))).toBe("sequence_replayed");
    core.activate(study);
    const v = viewOf(renew(10, 20_000));
    expect(v.lease_deadline_ms).toBe(40_000);
    expect(v.sequence).toBe(10);
    expect(viewOf(renew(11, 39_000)).lease_deadline_ms).toBe(51_000); // study deadline 1000 + 50000
  });

  test("a terminal study is lease_inactive", () => {
    const core = newCore();
    const { study, token } = acquire(core);
    send(core, { operation: "release", study, capability: token });
    expect(codeOf(send(core, { operation: "renew", study, capability: token, sequence: 1 }))).toBe("lease_inactive");
  });
});

describe("allocate", () => {
  test("a new attempt is reserved with an allocate_slot effect; a replay returns it without an effect", () => {
    const { core, study, token, identity, decision } = withAllocation();
    expect(decision.effects).toEqual([{ kind: "allocate_slot", identity, profile: "development" }]);
    if (!decision.reply.ok || decision.reply.operation !== "allocate") throw new Error("allocate");
    expect(decision.reply.allocation).toEqual({ allocation: identity.allocation, attempt: hex(10), state: "reserved", profile: "development" });
    const replay = send(core, { operation: "allocate", study, capability: token, attempt: hex(10) });
    expect(replay.effects).toEqual([]);
    expect(replay.reply).toEqual(decision.reply);
    expect(core.usage().global).toBe(1);
  });

  test("per-study and global limits are capacity_exhausted; every non-absent state holds its slot", () => {
    const core = newCore({ perStudy: 2, globalSlots: 3 });
    const a = acquire(core, hex(1));
    const b = acquire(core, hex(2));
    const alloc = (s: { study: string; token: string }, n: number) =>
      send(core, { operation: "allocate", study: s.study, capability: s.token, attempt: hex(n) });
    const ids: AllocationIdentity[] = [];
    for (const n of [10, 11]) {
      const d = alloc(a, n);
      expect(codeOf(d)).toBe("ok");
      ids.push(d.effects[0]!.identity);
    }
    expect(codeOf(alloc(a, 12))).toBe("capacity_exhausted");
    expect(codeOf(alloc(b, 20))).toBe("ok");
    expect(codeOf(alloc(b, 21))).toBe("capacity_exhausted"); // global 3 reached
    core.beginAllocation(ids[0]!);
    core.recordOutcome(ids[0]!, "unknown");
    expect(codeOf(alloc(b, 21))).toBe("capacity_exhausted"); // unresolved still holds its slot
    core.confirmAbsent({ identity: ids[0]!, creationQuiescent: true });
    expect(codeOf(alloc(b, 21))).toBe("ok");
    expect(core.usage()).toEqual({ global: 3, byStudy: { [a.study]: 1, [b.study]: 2 } });
  });

  test("attempts at max (absent ones included) are ledger_full; terminal studies are lease_inactive", () => {
    const core = newCore({ maxAttemptsPerStudy: 2 });
    const { study, token } = acquire(core);
    for (const n of [10, 11]) {
      const d = send(core, { operation: "allocate", study, capability: token, attempt: hex(n) });
      core.confirmAbsent({ identity: d.effects[0]!.identity, creationQuiescent: true });
    }
    expect(codeOf(send(core, { operation: "allocate", study, capability: token, attempt: hex(12) }))).toBe("ledger_full");
    expect(codeOf(send(core, { operation: "allocate", study, capability: token, attempt: hex(10) }))).toBe("ok"); // replay
    send(core, { operation: "release", study, capability: token });
    expect(codeOf(send(core, { operation: "allocate", study, capability: token, attempt: hex(10) }))).toBe("lease_inactive");
  });
});

describe("release, revoke and pending cleanup", () => {
  test("release revokes, marks held allocations releasing and returns repeatable stop effects", () => {
    const { core, study, token, identity } = withAllocation();
    const stop: Effect[] = [{ kind: "stop_slot", identity, profile: "development" }];
    const d = send(core, { operation: "release", study, capability: token });
    expect(viewOf(d).state).toBe("revoked");
    expect(viewOf(d).allocations[0]!.state).toBe("releasing");
    expect(d.effects).toEqual(stop);
    expect(send(core, { operation: "release", study, capability: token }).effects).toEqual(stop);
    expect(core.pendingCleanup()).toEqual(stop);
    expect(core.pendingCleanup()).toEqual(stop);
    core.confirmAbsent({ identity, creationQuiescent: true });
    expect(core.pendingCleanup()).toEqual([]);
    expect(core.usage().global).toBe(0);
  });

  test("owner revoke: stop effects; a terminal study keeps its first terminal state; unknown study is not_found", () => {
    const { core, study, identity } = withAllocation();
    core.advance(at(21_000));
    expect(core.studies()[0]!.state).toBe("expired");
    expect(core.revoke(study)).toEqual([{ kind: "stop_slot", identity, profile: "development" }]);
    expect(core.studies()[0]!.state).toBe("expired");
    throwsCode(() => core.revoke(hex(5)), "not_found");
    throwsCode(() => core.revoke("nope"), "not_found");
  });
});

describe("owner facts: begin, outcome, absence", () => {
  test("reserved → creating → present, then absent frees the slot", () => {
    const { core, identity } = withAllocation();
    expect(core.beginAllocation(identity).state).toBe("creating");
    throwsCode(() => core.beginAllocation(identity), "invalid_owner_fact");
    expect(core.recordOutcome(identity, "present").state).toBe("present");
    throwsCode(() => core.recordOutcome(identity, "present"), "invalid_owner_fact");
    expect(core.confirmAbsent({ identity, creationQuiescent: true }).state).toBe("absent");
    expect(core.confirmAbsent({ identity, creationQuiescent: true }).state).toBe("absent");
    expect(core.usage().global).toBe(0);
    throwsCode(() => core.beginAllocation(identity), "invalid_owner_fact");
  });

  test("typed requests go through the same checks and state machine; allocation() looks an identity up", () => {
    const { core, study, token, identity } = withAllocation();
    const ctx = { peerUid: UID, clock: at(1000) };
    expect(codeOf(core.request({ operation: "renew", study, capability: token, sequence: 1.5 }, ctx))).toBe("invalid_request");
    expect(codeOf(core.request({ operation: "inspect", study, capability: token.toUpperCase() }, ctx))).toBe("invalid_request");
    expect(codeOf(core.request({ operation: "renew", study, capability: token, sequence: 1 }, { ...ctx, peerUid: 4242 }))).toBe("unauthorized");
    expect(codeOf(core.request({ operation: "renew", study, capability: token, sequence: 1 }, ctx))).toBe("ok");
    expect(codeOf(core.request({ operation: "renew", study, capability: token, sequence: 1 }, ctx))).toBe("sequence_replayed");
    expect(core.allocation(identity)).toEqual({ allocation: identity.allocation, attempt: hex(10), state: "reserved", profile: "development" });
    expect(core.allocation({ ...identity, allocation: hex(5) })).toBeUndefined();
    expect(core.allocation(null as never)).toBeUndefined();
  });

  test("unknown outcome → unresolved; an outcome without an open creation is refused", () => {
    const { core, identity } = withAllocation();
    throwsCode(() => core.recordOutcome(identity, "present"), "invalid_owner_fact");
    core.beginAllocation(identity);
    throwsCode(() => core.recordOutcome(identity, "absent" as never), "invalid_owner_fact");
    expect(core.recordOutcome(identity, "unknown").state).toBe("unresolved");
  });

  test("a study that dies during creation: the outcome leaves the allocation releasing and the slot held", () => {
    const { core, identity } = withAllocation();
    core.beginAllocation(identity);
    const effects = core.advance(at(30_000));
    expect(effects).toEqual([{ kind: "stop_slot", identity, profile: "development" }]);
    expect(core.recordOutcome(identity, "present").state).toBe("releasing");
    expect(core.usage().global).toBe(1);
    throwsCode(() => core.beginAllocation(identity), "invalid_owner_fact");
  });

  test("begin in a dead study, malformed or foreign identities, and non-quiescent absences are invalid_owner_fact", () => {
    const { core, identity, study, token } = withAllocation();
    for (const bad of [
      { ...identity, installation: "f".repeat(32) },
      { ...identity, boot: OTHER_BOOT },
      { ...identity, study: hex(77) },
      { ...identity, allocation: hex(77) },
      { ...identity, allocation: "X" },
      null,
    ]) {
      throwsCode(() => core.beginAllocation(bad as AllocationIdentity), "invalid_owner_fact");
      throwsCode(() => core.confirmAbsent({ identity: bad as AllocationIdentity, creationQuiescent: true }), "invalid_owner_fact");
    }
    throwsCode(() => core.confirmAbsent({ identity, creationQuiescent: false as true }), "invalid_owner_fact");
    throwsCode(() => core.confirmAbsent(null as never), "invalid_owner_fact");
    send(core, { operation: "release", study, capability: token });
    throwsCode(() => core.beginAllocation(identity), "invalid_owner_fact");
  });

  test("activate: startup → active without renewing; active stays; terminal is invalid_owner_fact; unknown is not_found", () => {
    const core = newCore();
    const { study, token } = acquire(core);
    const before = core.studies()[0]!;
    expect(core.activate(study)).toEqual({ ...before, state: "active" });
    expect(core.activate(study).state).toBe("active");
    send(core, { operation: "release", study, capability: token });
    throwsCode(() => core.activate(study), "invalid_owner_fact");
    throwsCode(() => core.activate(hex(3)), "not_found");
  });
});

describe("advance: expiry and clock discontinuities", () => {
  test("expiry is inclusive at the lease deadline", () => {
    const core = newCore();
    acquire(core); // lease 21000
    expect(core.advance(at(20_999))).toEqual([]);
    expect(core.studies()[0]!.state).toBe("startup");
    core.advance(at(21_000));
    expect(core.studies()[0]!.state).toBe("expired");
    expect(core.mode).toBe("accepting");
  });

  test("the startup cap expires a study however often it renews; active studies expire at the study cap", () => {
    const core = newCore({ ttlMs: 10_000, startupCapMs: 15_000, studyCapMs: 30_000 });
    const a = acquire(core, hex(1));
    const b = acquire(core, hex(2));
    core.activate(b.study);
    let seq = 0;
    for (let ms = 2000; ms < 35_000; ms += 3000) {
      seq++;
      for (const s of [a, b]) send(core, { operation: "renew", study: s.study, capability: s.token, sequence: seq }, ms);
    }
    const [sa, sb] = core.studies();
    expect(sa!.state).toBe("expired");
    expect(sa!.lease_deadline_ms).toBe(16_000);
    expect(sb!.state).toBe("expired");
    expect(sb!.lease_deadline_ms).toBe(31_000);
  });

  for (const [name, clock, state] of [
    ["a boot id change", at(2000, OTHER_BOOT), "boot_mismatch"],
    ["time going backwards", at(999), "clock_rollback"],
    ["a reported sleep", at(2000, BOOT, true), "sleep"],
  ] as const) {
    test(`${name} → ${state}: reconciliation, every live study terminal, held slots releasing; a late renewal cannot undo it`, () => {
      const { core, study, token, identity } = withAllocation();
      const other = acquire(core, hex(2));
      core.activate(other.study);
      const effects = core.advance(clock);
      expect(effects).toEqual([{ kind: "stop_slot", identity, profile: "development" }]);
      expect(core.mode).toBe("reconciliation");
      expect(core.studies().map((s) => s.state)).toEqual([state, state]);
      expect(core.studies()[0]!.allocations[0]!.state).toBe("releasing");
      const late = core.handle(encodeRequest({ operation: "renew", study, capability: token, sequence: 99 }), {
        peerUid: UID,
        clock: { ...clock, sleepDetected: false },
      });
      expect(codeOf(late)).toBe("reconciliation_required");
      core.advance({ ...clock, boottimeMs: clock.boottimeMs + 1, sleepDetected: false });
      expect(core.mode).toBe("reconciliation");
      expect(core.studies().map((s) => s.state)).toEqual([state, state]);
      expect(core.usage().global).toBe(1);
    });
  }

  test("boot id change wins over rollback and sleep; the discontinuity arriving through a request terminates too", () => {
    const core = newCore();
    acquire(core);
    core.advance({ bootId: OTHER_BOOT, boottimeMs: 1, sleepDetected: true });
    expect(core.studies()[0]!.state).toBe("boot_mismatch");
    const c2 = newCore();
    acquire(c2);
    const d = c2.handle(encodeRequest({ operation: "hello" }), { peerUid: UID, clock: { bootId: BOOT, boottimeMs: 10, sleepDetected: true } });
    expect(d.reply).toEqual({ ok: true, operation: "hello", version: 1, mode: "reconciliation" });
    expect(c2.studies()[0]!.state).toBe("clock_rollback");
  });
});
