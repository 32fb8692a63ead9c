/**
 * Broker core cost vs floors in the same process:
 *
 *   ./node_modules/.bin/bun bench/broker.ts
 *
 * A. `decodeRequest` of a renew body (the strict flat-JSON decoder plus field checks) vs
 *    `JSON.parse` of the same bytes after a UTF-8 decode (which checks none of the rules).
 * B. A full `handle()` of that renew (uid check, clock advance, decode, capability hash and
 *    constant-time compare, lease update) vs the floor any authenticated request pays: the
 *    `JSON.parse` plus one sha256 of the capability tuple.
 * C. A fresh typed capacity ledger and 32 seat cycles (reserve → beginCreate → recordOutcome →
 *    confirmAbsent) vs the same work as raw core calls with prebuilt typed requests.
 * Prints µs per operation (best of 9 rounds, so other load on the machine mostly drops out) and
 * the ratios.
 */
import { createHash } from "node:crypto";
import { BrokerCore, createCapacityLedger, decodeRequest, encodeRequest } from "../src/broker/index.ts";
import { emitFigures, type Figure, figure } from "./lib/figures.ts";

const entropy = (n: number) => crypto.getRandomValues(new Uint8Array(n));
const BOOT = "b".repeat(32);

function perOp(n: number, run: (i: number) => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 9; round++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) run(i);
    best = Math.min(best, (performance.now() - t0) / n);
  }
  return best * 1000;
}

const figures: Figure[] = [];
function line(name: string, us: number, floorName: string, floorUs: number): void {
  figures.push(figure(`${name} vs ${floorName}`, us, "µs", floorUs));
  console.log(`${name}: ${us.toFixed(2)} µs/op  vs ${floorName}: ${floorUs.toFixed(2)} µs/op  ratio ${(us / floorUs).toFixed(2)}×`);
}

const N = 20_000;
let sink = 0;

// A
const renewBytes = encodeRequest({ operation: "renew", study: "0".repeat(32), capability: "1".repeat(64), sequence: 12345 });
const a = perOp(N, () => {
  sink += decodeRequest(renewBytes).operation.length;
});
const aFloor = perOp(N, () => {
  sink += (JSON.parse(new TextDecoder().decode(renewBytes)) as { operation: string }).operation.length;
});
line("A decodeRequest(renew)", a, "JSON.parse", aFloor);

// B
const core = BrokerCore.create(
  { authorizedUids: [1000], ttlMs: 60_000, studyCapMs: 86_400_000, startupCapMs: 600_000 },
  { entropy, clock: { bootId: BOOT, boottimeMs: 0, sleepDetected: false } },
);
const acq = core.handle(encodeRequest({ operation: "acquire", attempt: "2".repeat(32) }), {
  peerUid: 1000,
  clock: { bootId: BOOT, boottimeMs: 0, sleepDetected: false },
});
const study = acq.capability!.study;
const capability = acq.capability!.reveal();
core.activate(study);
let seq = 0;
let ms = 0;
const renews = Array.from({ length: 10 * N + 10 }, (_, i) => encodeRequest({ operation: "renew", study, capability, sequence: i + 1 }));
const b = perOp(N, () => {
  const d = core.handle(renews[seq++]!, { peerUid: 1000, clock: { bootId: BOOT, boottimeMs: ++ms, sleepDetected: false } });
  if (!d.reply.ok) throw new Error(`renew refused: ${d.reply.error}`);
});
const tuple = ["humanish-broker-capability-v1", "a".repeat(32), BOOT, study, 1000, 0, 600_000, 86_400_000, capability];
const bFloor = perOp(N, () => {
  JSON.parse(new TextDecoder().decode(renews[0]!));
  sink += createHash("sha256").update(JSON.stringify(tuple)).digest("hex").length;
});
line("B handle(renew)", b, "JSON.parse + one sha256", bFloor);

// C: one round = a fresh ledger (or raw core + acquire) and 32 full seat cycles.
const clock0 = { bootId: BOOT, boottimeMs: 0, sleepDetected: false };
const c = perOp(200, () => {
  const ledger = createCapacityLedger({ maxAttemptsPerStudy: 32 }, { entropy, clock: clock0 });
  for (let i = 0; i < 32; i++) {
    const id = `seat-${i}`;
    if (!ledger.reserve(id).ok) throw new Error("reserve refused");
    ledger.beginCreate(id);
    ledger.recordOutcome(id, "present");
    ledger.confirmAbsent(id);
  }
});
const attempts = Array.from({ length: 33 }, (_, i) => i.toString(16).padStart(32, "0"));
const cFloor = perOp(200, () => {
  const raw = BrokerCore.create({ authorizedUids: [0], maxAttemptsPerStudy: 32 }, { entropy, clock: clock0 });
  const acq = raw.request({ operation: "acquire", attempt: attempts[32]! }, { peerUid: 0, clock: clock0 });
  const rawStudy = acq.capability!.study;
  const rawCap = acq.capability!.reveal();
  for (let i = 0; i < 32; i++) {
    const d = raw.request({ operation: "allocate", study: rawStudy, capability: rawCap, attempt: attempts[i]! }, { peerUid: 0, clock: clock0 });
    const e = d.effects[0];
    if (e === undefined) throw new Error("allocate refused");
    raw.beginAllocation(e.identity);
    raw.recordOutcome(e.identity, "present");
    raw.confirmAbsent({ identity: e.identity, creationQuiescent: true });
  }
});
line("C capacity ledger: create + 32 seat cycles", c, "raw core calls", cFloor);
if (sink < 0) console.log(sink);
emitFigures(figures);
