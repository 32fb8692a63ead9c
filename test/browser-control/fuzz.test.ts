/**
 * Seeded mutation fuzzing of framed messages: never an unexpected exception, never a hang,
 * always a typed result. Seeds are fixed so failures reproduce; iteration counts are fixed
 * (≥ 100,000 frame mutations) and each phase also has a wall-clock guard.
 */
import { expect, test } from "bun:test";
import {
  attachBrowserControlDispatcher,
  BROWSER_CONTROL_ERROR_CODES,
  BrowserControlTransport,
  createBrowserControlClient,
  encodeFrame,
  FrameDecoder,
  isBrowserControlError,
  replySchema,
  requestSchema,
} from "../../src/browser-control/index.ts";
import { makePng } from "../support/png.ts";
import { rng } from "../support/rng.ts";
import { concat, IDENTITY, sleep, streamPair } from "./support.ts";

/** Yield to the event loop once (lets stream events and microtasks run). */
const tick = () => new Promise<void>((r) => setImmediate(r));
const PNG_B64 = Buffer.from(makePng(4, 3, { seed: 9, alpha: true })).toString("base64");
const base = { version: 1, identity: IDENTITY };
const VALID: Array<Record<string, unknown>> = [
  { ...base, type: "request", seq: 1, requestId: "request-1", operation: "HELLO" },
  { ...base, type: "request", seq: 2, requestId: "request-2", operation: "OBSERVE" },
  {
    ...base,
    type: "request",
    seq: 3,
    requestId: "request-3",
    operation: "EXECUTE",
    actionId: "action-3",
    action: { kind: "click", x: 12.5, y: 7, button: "left" },
  },
  { ...base, type: "request", seq: 4, requestId: "request-4", operation: "EXECUTE", actionId: "action-4", action: { kind: "type", text: "héllo wörld ✓ 𝄞" } },
  {
    ...base,
    type: "request",
    seq: 5,
    requestId: "request-5",
    operation: "EXECUTE",
    actionId: "action-5",
    action: {
      kind: "drag",
      path: [
        { x: 1, y: 2 },
        { x: 3, y: 4 },
      ],
    },
  },
  { ...base, type: "request", seq: 6, requestId: "request-6", operation: "EXECUTE", actionId: "action-6", action: { kind: "keypress", keys: ["CTRL", "L"] } },
  { ...base, type: "reply", seq: 2, requestId: "request-2", operation: "OBSERVE", ok: true, observation: { png: PNG_B64, stateSignature: "abc", scrollY: 3 } },
  {
    ...base,
    type: "reply",
    seq: 3,
    requestId: "request-3",
    operation: "EXECUTE",
    actionId: "action-3",
    ok: false,
    error: { code: "action_rejected", disposition: "not_dispatched" },
  },
];
const FRAMES = VALID.map((m) => encodeFrame(m));
const FAULTS = new Set(["bad_length", "bad_utf8", "bom", "bad_json"]);
const INTERESTING = [0x00, 0x22, 0x5c, 0x7b, 0x7d, 0x80, 0xbf, 0xc0, 0xc1, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];

function mutate(src: Uint8Array, r: () => number): Uint8Array {
  const b = Uint8Array.from(src);
  const ops = 1 + Math.floor(r() * 4);
  let out: Uint8Array = b;
  for (let k = 0; k < ops; k++) {
    const pick = Math.floor(r() * 8);
    const i = Math.floor(r() * out.length);
    if (pick === 0) out[i] = Math.floor(r() * 256);
    else if (pick === 1) out[i] = INTERESTING[Math.floor(r() * INTERESTING.length)]!;
    else if (pick === 2) out[i]! ^= 1 << Math.floor(r() * 8);
    else if (pick === 3)
      out = out.subarray(0, i); // truncate
    else if (pick === 4)
      out = concat([out.subarray(0, i), out.subarray(i + 1 + Math.floor(r() * 8))]); // delete
    else if (pick === 5)
      out = concat([out.subarray(0, i), Uint8Array.of(INTERESTING[Math.floor(r() * INTERESTING.length)]!), out.subarray(i)]); // insert
    else if (pick === 6 && out.length >= 4)
      new DataView(out.buffer, out.byteOffset).setUint32(0, Math.floor(r() * 2 ** 32)); // length header
    else if (out.length >= 4) new DataView(out.buffer, out.byteOffset).setUint32(0, Math.max(0, out.length - 4 + Math.floor(r() * 5) - 2)); // near-miss length
  }
  return Uint8Array.from(out);
}

test("frame decoder + schemas: 120,000 seeded mutations, always a typed result", () => {
  const r = rng(0x5eed1);
  let messages = 0;
  let faults = 0;
  const N = 120_000;
  for (let n = 0; n < N; n++) {
    const src = FRAMES[n % FRAMES.length]!;
    const bytes = n % 7 === 0 ? concat([mutate(src, r), FRAMES[(n + 1) % FRAMES.length]!]) : mutate(src, r);
    const d = new FrameDecoder();
    const before = Buffer.from(bytes);
    // Deliver in random chunks (1-byte drips included).
    let off = 0;
    const out: unknown[] = [];
    let fault = null;
    while (off < bytes.length) {
      const size = r() < 0.2 ? 1 : 1 + Math.floor(r() * bytes.length);
      const res = d.push(bytes.subarray(off, off + size));
      off += size;
      out.push(...res.messages);
      if (res.fault) {
        fault = res.fault;
        break;
      }
    }
    // The decoder may blank length prefixes during a batched check but must restore them.
    if (Buffer.compare(before, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) !== 0) throw new Error(`input changed at iteration ${n}`);
    if (fault) {
      faults++;
      if (!FAULTS.has(fault.kind)) throw new Error(`untyped fault ${JSON.stringify(fault)}`);
    }
    for (const m of out) {
      messages++;
      const a = requestSchema.safeParse(m);
      const b = replySchema.safeParse(m);
      if (typeof a.success !== "boolean" || typeof b.success !== "boolean") throw new Error("untyped schema result");
    }
  }
  expect(messages).toBeGreaterThan(1000);
  expect(faults).toBeGreaterThan(1000);
}, 60_000);

test("dispatcher under mutated request streams: always closes with a typed code or answers, never throws", async () => {
  const r = rng(0x5eed2);
  const codes = new Set<string>(BROWSER_CONTROL_ERROR_CODES);
  const N = 5000;
  const hello = encodeFrame(VALID[0]);
  for (let n = 0; n < N; n++) {
    const { host, guest } = streamPair();
    const gt = new BrowserControlTransport(guest);
    let executed = 0;
    attachBrowserControlDispatcher({
      transport: gt,
      identity: IDENTITY,
      executor: {
        observe: async () => ({ png: makePng(2, 2, { alpha: true }), stateSignature: "s" }),
        execute: async () => {
          executed++;
        },
      },
      isAuthorized: () => true,
      authoritySignal: new AbortController().signal,
      requestDeadlineMs: 200,
    });
    const pick = FRAMES.slice(1, 6)[n % 5]!;
    host.write(concat([hello, mutate(pick, r)]));
    await tick();
    await tick();
    if (gt.closed) expect(codes.has(gt.closeCode!)).toBe(true);
    expect(executed).toBeLessThanOrEqual(1);
    gt.close();
  }
}, 60_000);

test("client under mutated replies: every call settles with a typed error or a value, never hangs", async () => {
  const r = rng(0x5eed3);
  const N = 5000;
  for (let n = 0; n < N; n++) {
    const { host, guest } = streamPair();
    const client = createBrowserControlClient({ transport: new BrowserControlTransport(host), identity: IDENTITY, requestTimeoutMs: 1000 });
    const obs = n % 2 === 0;
    const call = (obs ? client.executor.observe() : client.executor.execute({ kind: "click", x: 12.5, y: 7, button: "left" })).then(
      () => "ok" as const,
      (e: unknown) => e,
    );
    const helloReply = encodeFrame({ ...base, type: "reply", seq: 1, requestId: "request-1", operation: "HELLO", ok: true });
    const target = obs
      ? { ...base, type: "reply", seq: 2, requestId: "request-2", operation: "OBSERVE", ok: true, observation: { png: PNG_B64, stateSignature: "abc" } }
      : { ...base, type: "reply", seq: 2, requestId: "request-2", operation: "EXECUTE", actionId: "action-2", ok: true };
    guest.write(helloReply);
    await tick();
    guest.write(mutate(encodeFrame(target), r));
    await tick();
    await tick();
    client.close(); // bounds any call still waiting for bytes
    const outcome = await Promise.race([call, sleep(2000).then(() => "hang")]);
    if (outcome === "hang") throw new Error(`call ${n} did not settle`);
    if (outcome !== "ok" && !isBrowserControlError(outcome)) throw new Error(`untyped failure: ${String(outcome)}`);
  }
}, 60_000);
