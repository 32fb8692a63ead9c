/**
 * Client ↔ dispatcher behaviour over in-memory streams: handshake, correlation, one request in
 * flight, dispositions, deadlines, cancellation, revocation and what closes the channel.
 */
import { describe, expect, test } from "bun:test";
import {
  type ActionDisposition,
  attachBrowserControlDispatcher,
  type BrowserAction,
  BrowserControlError,
  type BrowserControlErrorCode,
  BrowserControlTransport,
  type BrowserExecutor,
  type BrowserObservation,
  createBrowserControlClient,
  encodeFrame,
  FrameDecoder,
  isBrowserControlError,
} from "../../src/browser-control/index.ts";
import { makePng } from "../support/png.ts";
import { waitUntil } from "../support/wait.ts";
import { IDENTITY, sleep, streamPair, type TestStream } from "./support.ts";

const PNG_BYTES = makePng(8, 6, { seed: 3, alpha: true });

/** Await a rejection and check its executor code and disposition. */
async function expectFailure(p: Promise<unknown>, code: BrowserControlErrorCode, disposition: ActionDisposition): Promise<BrowserControlError> {
  try {
    await p;
  } catch (e) {
    if (!isBrowserControlError(e)) throw new Error(`expected a BrowserControlError, got ${String(e)}`);
    expect({ code: e.errorCode, disposition: e.disposition }).toEqual({ code, disposition });
    return e;
  }
  throw new Error(`expected ${code}/${disposition}, but the call succeeded`);
}

interface Recorder extends BrowserExecutor {
  calls: Array<{ op: "observe" | "execute"; action?: BrowserAction; signal: AbortSignal }>;
}

function recordingExecutor(overrides: Partial<BrowserExecutor> = {}): Recorder {
  const calls: Recorder["calls"] = [];
  return {
    calls,
    observe(signal) {
      calls.push({ op: "observe", signal });
      return overrides.observe
        ? overrides.observe(signal)
        : Promise.resolve({ png: PNG_BYTES, stateSignature: "sig-1", url: "http://127.0.0.1:3000/", scrollY: 12.5 });
    },
    execute(action, signal) {
      calls.push({ op: "execute", action, signal });
      return overrides.execute ? overrides.execute(action, signal) : Promise.resolve();
    },
  };
}

function setup(opts: { executor?: BrowserExecutor; isAuthorized?: () => boolean; requestTimeoutMs?: number; requestDeadlineMs?: number } = {}) {
  const { host, guest } = streamPair();
  const hostTransport = new BrowserControlTransport(host);
  const guestTransport = new BrowserControlTransport(guest);
  const authority = new AbortController();
  const executor = opts.executor ?? recordingExecutor();
  const dispatcher = attachBrowserControlDispatcher({
    transport: guestTransport,
    identity: IDENTITY,
    executor,
    isAuthorized: opts.isAuthorized ?? (() => true),
    authoritySignal: authority.signal,
    ...(opts.requestDeadlineMs ? { requestDeadlineMs: opts.requestDeadlineMs } : {}),
  });
  const client = createBrowserControlClient({
    transport: hostTransport,
    identity: IDENTITY,
    ...(opts.requestTimeoutMs ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
  });
  return { host, guest, hostTransport, guestTransport, authority, dispatcher, client, executor };
}

/** Decode every frame a stream wrote. */
function framesWritten(s: TestStream): Array<Record<string, unknown>> {
  const d = new FrameDecoder();
  const out: Array<Record<string, unknown>> = [];
  for (const chunk of s.written) out.push(...(d.push(chunk).messages as Array<Record<string, unknown>>));
  return out;
}

/** A client wired to a scripted guest: the test sees requests and writes raw replies. */
function scriptedGuest(requestTimeoutMs = 1000) {
  const { host, guest } = streamPair();
  const hostTransport = new BrowserControlTransport(host);
  const client = createBrowserControlClient({ transport: hostTransport, identity: IDENTITY, requestTimeoutMs });
  const requests: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  const d = new FrameDecoder();
  guest.on("data", (c: Buffer) => {
    requests.push(...(d.push(c).messages as Array<Record<string, unknown>>));
    waiters.splice(0).forEach((w) => w());
  });
  const nextRequest = async (): Promise<Record<string, unknown>> => {
    while (requests.length === 0) await new Promise<void>((r) => waiters.push(r));
    return requests.shift()!;
  };
  const reply = (req: Record<string, unknown>, extra: Record<string, unknown> = { ok: true }) => {
    const m: Record<string, unknown> = {
      version: 1,
      type: "reply",
      identity: IDENTITY,
      seq: req.seq,
      requestId: req.requestId,
      operation: req.operation,
      ...extra,
    };
    if (req.operation === "EXECUTE" && !("actionId" in extra)) m.actionId = req.actionId;
    guest.write(encodeFrame(m));
  };
  /** Answer the HELLO that the first call sends. */
  const handshake = async () => reply(await nextRequest());
  return { host, guest, hostTransport, client, nextRequest, reply, handshake };
}

describe("handshake, observe, execute", () => {
  test("HELLO/OBSERVE/EXECUTE with correlated ids; observation round-trips; every action kind reaches the executor", async () => {
    const s = setup();
    await s.client.ready();
    await s.client.ready(); // idempotent: no second HELLO
    const obs = await s.client.executor.observe();
    expect(Array.from(obs.png)).toEqual(Array.from(PNG_BYTES));
    expect(obs).toMatchObject({ stateSignature: "sig-1", url: "http://127.0.0.1:3000/", scrollY: 12.5 });
    const actions: BrowserAction[] = [
      { kind: "click", x: 1.5, y: 2, button: "middle" },
      { kind: "double_click", x: 3, y: 4 },
      { kind: "move", x: 5, y: 6 },
      { kind: "scroll", x: 1, y: 1, dx: 0, dy: 360 },
      { kind: "type", text: "héllo" },
      { kind: "keypress", keys: ["CTRL", "A"] },
      {
        kind: "drag",
        path: [
          { x: 1, y: 1 },
          { x: 9, y: 9 },
        ],
      },
      { kind: "wait", ms: 0.5 },
      { kind: "screenshot" },
    ];
    for (const a of actions) await s.client.executor.execute(a);
    const rec = s.executor as Recorder;
    expect(rec.calls.filter((c) => c.op === "execute").map((c) => c.action)).toEqual(actions);
    expect(rec.calls.every((c) => c.signal instanceof AbortSignal && !c.signal.aborted)).toBe(true);
    const sent = framesWritten(s.host);
    expect(sent.map((f) => [f.seq, f.requestId, f.operation, f.actionId])).toEqual([
      [1, "request-1", "HELLO", undefined],
      [2, "request-2", "OBSERVE", undefined],
      ...actions.map((_, i) => [i + 3, `request-${i + 3}`, "EXECUTE", `action-${i + 3}`]),
    ]);
    expect(sent.every((f) => JSON.stringify(f.identity) === JSON.stringify(IDENTITY))).toBe(true);
    const replies = framesWritten(s.guest);
    expect(replies.map((r) => [r.seq, r.ok])).toEqual(sent.map((f) => [f.seq, true]));
    expect(s.client.executor.stallRecovery).toBe("fail_closed");
    s.client.close();
    await expectFailure(s.client.executor.observe(), "executor_closed", "not_dispatched");
  });

  test("both directions delivered one byte per chunk (fragmented frames end to end)", async () => {
    const s = setup();
    s.host.drip = true;
    s.guest.drip = true;
    const obs = await s.client.executor.observe();
    expect(Array.from(obs.png)).toEqual(Array.from(PNG_BYTES));
    await s.client.executor.execute({ kind: "type", text: "ünïcödé ✓ 𝄞" });
    expect((s.executor as Recorder).calls.at(-1)?.action).toEqual({ kind: "type", text: "ünïcödé ✓ 𝄞" });
  });

  test("HELLO is lazy: the first execute sends HELLO then EXECUTE", async () => {
    const s = setup();
    expect(s.host.bytesWritten).toBe(0);
    await s.client.executor.execute({ kind: "move", x: 1, y: 1 });
    expect(framesWritten(s.host).map((f) => f.operation)).toEqual(["HELLO", "EXECUTE"]);
  });
});

describe("one request in flight", () => {
  test("concurrent calls: the second is refused executor_busy/not_dispatched, never queued or written", async () => {
    let release!: () => void;
    let n = 0;
    const exec = recordingExecutor({ execute: () => (n++ === 0 ? new Promise<void>((r) => (release = r)) : Promise.resolve()) });
    const s = setup({ executor: exec });
    await s.client.ready();
    const first = s.client.executor.execute({ kind: "click", x: 1, y: 1 });
    await sleep(5);
    const bytesBefore = s.host.bytesWritten;
    await expectFailure(s.client.executor.execute({ kind: "click", x: 2, y: 2 }), "executor_busy", "not_dispatched");
    await expectFailure(s.client.executor.observe(), "executor_busy", "not_dispatched");
    await expectFailure(s.client.ready(), "executor_busy", "not_dispatched");
    expect(s.host.bytesWritten).toBe(bytesBefore);
    release();
    await first;
    expect(exec.calls.length).toBe(1);
    // The channel is still fine afterwards.
    await s.client.executor.execute({ kind: "click", x: 3, y: 3 });
    expect(exec.calls.length).toBe(2);
  });

  test("a second call during the lazy HELLO of the first is refused", async () => {
    const s = setup();
    const a = s.client.executor.observe();
    await expectFailure(s.client.executor.execute({ kind: "screenshot" }), "executor_busy", "not_dispatched");
    await a;
  });

  test("dispatcher: a frame while busy closes the channel executor_busy", async () => {
    const { host, guest } = streamPair();
    const gt = new BrowserControlTransport(guest);
    attachBrowserControlDispatcher({
      transport: gt,
      identity: IDENTITY,
      executor: recordingExecutor({ execute: () => new Promise(() => undefined) }),
      isAuthorized: () => true,
      authoritySignal: new AbortController().signal,
    });
    const req = (seq: number, operation: string, extra: Record<string, unknown> = {}) =>
      encodeFrame({ version: 1, type: "request", identity: IDENTITY, seq, requestId: `request-${seq}`, operation, ...extra });
    host.write(req(1, "HELLO"));
    await sleep(5);
    // Two coalesced frames: the second arrives while the first is reserved.
    host.write(Buffer.concat([req(2, "EXECUTE", { actionId: "action-2", action: { kind: "screenshot" } }), req(3, "OBSERVE")]));
    await sleep(5);
    expect(gt.closeCode).toBe("executor_busy");
  });
});

describe("dispositions", () => {
  test("EXECUTE action_rejected/not_dispatched is returned and the channel stays open", async () => {
    let n = 0;
    const s = setup({
      executor: recordingExecutor({
        execute: async () => {
          if (n++ === 0) throw new BrowserControlError("action_rejected", "not_dispatched", "point off-screen");
        },
      }),
    });
    await expectFailure(s.client.executor.execute({ kind: "click", x: -5, y: 1 }), "action_rejected", "not_dispatched");
    await s.client.executor.execute({ kind: "click", x: 5, y: 1 });
    expect(s.guestTransport.closed).toBe(false);
  });

  test("a typed outcome_uncertain failure passes through and closes the channel", async () => {
    const s = setup({ executor: recordingExecutor({ execute: async () => Promise.reject(new BrowserControlError("execution_failed", "outcome_uncertain")) }) });
    await expectFailure(
      s.client.executor.execute({
        kind: "drag",
        path: [
          { x: 1, y: 1 },
          { x: 2, y: 2 },
        ],
      }),
      "execution_failed",
      "outcome_uncertain",
    );
    await sleep(5);
    expect(s.guestTransport.closeCode).toBe("execution_failed");
    await expectFailure(s.client.executor.execute({ kind: "screenshot" }), "executor_closed", "not_dispatched");
  });

  test("an untyped executor exception after invocation is outcome_uncertain and terminal (sync and async throws)", async () => {
    for (const bad of [
      () => {
        throw new Error("xdotool died with secret text");
      },
      async () => {
        throw "string thrown";
      },
      // A look-alike object must not pass as a typed not_dispatched error.
      async () => {
        throw Object.assign(Object.create(BrowserControlError.prototype), { errorCode: "action_rejected", disposition: "not_dispatched" });
      },
    ]) {
      const s = setup({ executor: recordingExecutor({ execute: bad as BrowserExecutor["execute"] }) });
      const e = await expectFailure(s.client.executor.execute({ kind: "type", text: "secret-typed-text" }), "action_rejected", "outcome_uncertain");
      expect(e.message).not.toContain("secret");
      const wire = framesWritten(s.guest)
        .map((f) => JSON.stringify(f))
        .join("\n");
      expect(wire).not.toContain("secret");
      expect(wire).not.toContain("xdotool");
      await expectFailure(s.client.executor.observe(), "executor_closed", "not_dispatched");
    }
  });

  test("observe returning an invalid PNG or an unknown field (appState) fails invalid_response and closes", async () => {
    for (const obs of [
      { png: new Uint8Array(100), stateSignature: "s" },
      { png: PNG_BYTES, stateSignature: "s", appState: { a: 1 } },
      { png: PNG_BYTES, stateSignature: "x".repeat(64 * 1024 + 1) },
    ]) {
      const s = setup({ executor: recordingExecutor({ observe: async () => obs as BrowserObservation }) });
      await expectFailure(s.client.executor.observe(), "invalid_response", "outcome_uncertain");
      await sleep(5);
      expect(s.guestTransport.closeCode).toBe("invalid_response");
    }
  });
});

describe("cancellation, deadlines, lost acknowledgements", () => {
  test("cancellation before write: nothing is written and the channel stays usable", async () => {
    const s = setup();
    await s.client.ready();
    const before = s.host.bytesWritten;
    const ac = new AbortController();
    ac.abort();
    await expectFailure(s.client.executor.execute({ kind: "click", x: 1, y: 1 }, ac.signal), "cancelled", "not_dispatched");
    await expectFailure(s.client.executor.observe(ac.signal), "cancelled", "not_dispatched");
    // Invalid actions are refused locally too.
    await expectFailure(s.client.executor.execute({ kind: "click", x: 1 } as unknown as BrowserAction), "invalid_request", "not_dispatched");
    await expectFailure(s.client.executor.execute({ kind: "speak", text: "hi" } as unknown as BrowserAction), "invalid_request", "not_dispatched");
    await expectFailure(
      s.client.executor.execute({ kind: "click", x: 1, y: 1, heldKeys: ["SHIFT"] } as unknown as BrowserAction),
      "invalid_request",
      "not_dispatched",
    );
    expect(s.host.bytesWritten).toBe(before);
    expect((s.executor as Recorder).calls.length).toBe(0);
    await s.client.executor.execute({ kind: "click", x: 1, y: 1 });
    // Sequence numbers were not consumed by the refused calls.
    expect(framesWritten(s.host).map((f) => f.seq)).toEqual([1, 2]);
  });

  test("cancellation after write is cancelled/outcome_uncertain and closes the channel", async () => {
    const g = scriptedGuest();
    const p = g.client.ready();
    await g.handshake();
    await p;
    const ac = new AbortController();
    const call = g.client.executor.execute({ kind: "click", x: 1, y: 1 }, ac.signal);
    await g.nextRequest();
    ac.abort();
    await expectFailure(call, "cancelled", "outcome_uncertain");
    expect(g.hostTransport.closeCode).toBe("cancelled");
  });

  test("a failed lazy HELLO inside execute is re-labelled not_dispatched", async () => {
    const g = scriptedGuest();
    const call = g.client.executor.execute({ kind: "click", x: 1, y: 1 });
    const hello = await g.nextRequest();
    g.reply(hello, { ok: false, error: { code: "protocol_mismatch", disposition: "outcome_uncertain" } });
    await expectFailure(call, "protocol_mismatch", "not_dispatched");
  });

  test("client deadline: no reply → deadline_exceeded/outcome_uncertain; a late reply cannot reopen", async () => {
    const g = scriptedGuest(1000);
    const p = g.client.ready();
    await g.handshake();
    await p;
    const call = g.client.executor.execute({ kind: "click", x: 1, y: 1 });
    const req = await g.nextRequest();
    await expectFailure(call, "deadline_exceeded", "outcome_uncertain");
    expect(g.hostTransport.closeCode).toBe("deadline_exceeded");
    g.reply(req); // late acknowledgement
    await sleep(10);
    await expectFailure(g.client.executor.execute({ kind: "screenshot" }), "executor_closed", "not_dispatched");
    await expectFailure(g.client.ready(), "executor_closed", "not_dispatched");
  });

  test("lost acknowledgement after write: reply arrives but the write callback never fires → outcome_uncertain", async () => {
    const g = scriptedGuest(1000);
    const p = g.client.ready();
    await g.handshake();
    await p;
    g.host.writeMode = "hold"; // bytes go out, the write callback never comes
    const call = g.client.executor.execute({ kind: "type", text: "x" });
    g.reply(await g.nextRequest());
    await expectFailure(call, "deadline_exceeded", "outcome_uncertain");
  });

  test("lost acknowledgement: the guest goes away after receiving the request → transport_failed/outcome_uncertain", async () => {
    const g = scriptedGuest();
    const p = g.client.ready();
    await g.handshake();
    await p;
    const call = g.client.executor.execute({ kind: "click", x: 1, y: 1 });
    await g.nextRequest();
    g.guest.destroy();
    await expectFailure(call, "transport_failed", "outcome_uncertain");
  });

  test("write failure → transport_failed/outcome_uncertain", async () => {
    const g = scriptedGuest();
    g.host.writeMode = "fail";
    await expectFailure(g.client.ready(), "transport_failed", "outcome_uncertain");
    expect(g.hostTransport.closeCode).toBe("transport_failed");
  });

  test("dispatcher deadline: executor stalls → executor signal aborted, deadline_exceeded/outcome_uncertain, channel closed", async () => {
    let seen: AbortSignal | null = null;
    const exec = recordingExecutor({
      execute: (_a, signal) => {
        seen = signal;
        return new Promise(() => undefined);
      },
    });
    const s = setup({ executor: exec, requestDeadlineMs: 50 });
    await expectFailure(s.client.executor.execute({ kind: "wait", ms: 30000 }), "deadline_exceeded", "outcome_uncertain");
    expect(seen!.aborted).toBe(true);
    await waitUntil(() => s.guestTransport.closeCode !== null, "the guest transport to close");
    expect(s.guestTransport.closeCode).toBe("deadline_exceeded");
  });

  test("dispatcher deadline covers writing the reply: a reply write that never completes closes deadline_exceeded", async () => {
    const s = setup({ requestDeadlineMs: 60 });
    await s.client.ready();
    s.guest.writeMode = "hold";
    s.guest.deliverWhenHeld = false;
    const call = s.client.executor.execute({ kind: "move", x: 1, y: 1 }).catch((e: unknown) => e);
    // The reply's write never completes: only the dispatcher's deadline can close the channel.
    await waitUntil(() => s.guestTransport.closeCode !== null, "the guest transport to close");
    expect(s.guestTransport.closeCode).toBe("deadline_exceeded");
    const e = await call;
    expect(isBrowserControlError(e) && e.disposition === "outcome_uncertain").toBe(true);
  });

  test("frame assembly deadline: a partial frame older than the deadline closes deadline_exceeded", async () => {
    const { host, guest } = streamPair();
    const t = new BrowserControlTransport(guest, { frameDeadlineMs: 40 });
    let closedWith: string | null = null;
    t.start({ onMessage: () => undefined, onClose: (c) => (closedWith = c) });
    const frame = encodeFrame({ a: 1 });
    host.write(frame.subarray(0, 2));
    await sleep(20);
    host.write(frame.subarray(2, 5)); // progress does not renew the deadline
    await sleep(40);
    expect(closedWith as string | null).toBe("deadline_exceeded");
  });
});

describe("revocation", () => {
  test("revocation during preparation: authority withdrawn before the executor call → session_revoked/not_dispatched, executor never invoked", async () => {
    let authorized = true;
    const exec = recordingExecutor();
    const s = setup({ executor: exec, isAuthorized: () => authorized });
    await s.client.ready();
    authorized = false;
    await expectFailure(s.client.executor.execute({ kind: "click", x: 1, y: 1 }), "session_revoked", "not_dispatched");
    expect(exec.calls.length).toBe(0);
    await sleep(5);
    expect(s.guestTransport.closeCode).toBe("session_revoked");
  });

  test("revocation while the executor runs: its signal aborts, no reply is sent, the channel closes session_revoked", async () => {
    let seen: AbortSignal | null = null;
    const exec = recordingExecutor({
      execute: (_a, signal) => {
        seen = signal;
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new BrowserControlError("session_revoked", "not_dispatched"))));
      },
    });
    const s = setup({ executor: exec });
    await s.client.ready();
    const call = s.client.executor.execute({ kind: "type", text: "abc" });
    await sleep(5);
    s.authority.abort();
    // The request was written and no reply will come: the host cannot know what happened.
    await expectFailure(call, "transport_failed", "outcome_uncertain");
    expect(seen!.aborted).toBe(true);
    expect(s.guestTransport.closeCode).toBe("session_revoked");
    expect(framesWritten(s.guest).length).toBe(1); // only the HELLO reply
  });

  test("a result that completes after revocation is dropped", async () => {
    let finish!: () => void;
    let authorized = true;
    const exec = recordingExecutor({ execute: () => new Promise<void>((r) => (finish = r)) });
    const s = setup({ executor: exec, isAuthorized: () => authorized });
    await s.client.ready();
    const call = s.client.executor.execute({ kind: "click", x: 1, y: 1 });
    await sleep(5);
    authorized = false; // withdrawn without the signal: checked when the result arrives
    finish();
    await expectFailure(call, "transport_failed", "outcome_uncertain");
    expect(s.guestTransport.closeCode).toBe("session_revoked");
    expect(framesWritten(s.guest).length).toBe(1);
  });

  test("attaching without authority closes at once", async () => {
    const { guest } = streamPair();
    const ac = new AbortController();
    ac.abort();
    const t = new BrowserControlTransport(guest);
    attachBrowserControlDispatcher({ transport: t, identity: IDENTITY, executor: recordingExecutor(), isAuthorized: () => true, authoritySignal: ac.signal });
    expect(t.closeCode).toBe("session_revoked");
    const t2 = new BrowserControlTransport(streamPair().guest);
    attachBrowserControlDispatcher({
      transport: t2,
      identity: IDENTITY,
      executor: recordingExecutor(),
      isAuthorized: () => false,
      authoritySignal: new AbortController().signal,
    });
    expect(t2.closeCode).toBe("session_revoked");
  });
});

describe("correlation and identity (client side)", () => {
  const cases: Array<[string, (req: Record<string, unknown>) => Record<string, unknown>, BrowserControlErrorCode]> = [
    [
      "wrong seq",
      (r) => ({ seq: (r.seq as number) + 1, requestId: `request-${(r.seq as number) + 1}`, actionId: `action-${(r.seq as number) + 1}`, ok: true }),
      "protocol_mismatch",
    ],
    ["requestId not request-<seq>", () => ({ requestId: "request-99", ok: true }), "invalid_response"],
    ["actionId not action-<seq>", () => ({ actionId: "action-99", ok: true }), "invalid_response"],
    ["wrong operation", () => ({ operation: "OBSERVE", observation: undefined, ok: true }), "invalid_response"],
    ["identity mismatch", () => ({ identity: { ...IDENTITY, challenge: "other" }, ok: true }), "protocol_mismatch"],
    ["unknown field", () => ({ ok: true, note: "hello" }), "invalid_response"],
    ["error with prose", () => ({ ok: false, error: { code: "execution_failed", disposition: "outcome_uncertain", message: "boom" } }), "invalid_response"],
  ];
  test.each(cases)("%s closes the channel", async (_name, mutate, code) => {
    const g = scriptedGuest();
    const p = g.client.ready();
    await g.handshake();
    await p;
    const call = g.client.executor.execute({ kind: "click", x: 1, y: 1 });
    const req = await g.nextRequest();
    const m = mutate(req);
    const msg: Record<string, unknown> = {
      version: 1,
      type: "reply",
      identity: IDENTITY,
      seq: req.seq,
      requestId: req.requestId,
      operation: req.operation,
      actionId: req.actionId,
      ...m,
    };
    for (const k of Object.keys(msg)) if (msg[k] === undefined) delete msg[k];
    g.guest.write(encodeFrame(msg));
    await expectFailure(call, code, "outcome_uncertain");
    expect(g.hostTransport.closeCode).toBe(code);
  });

  test("operation mismatch with a valid shape is protocol_mismatch", async () => {
    const g = scriptedGuest();
    const p = g.client.ready();
    const hello = await g.nextRequest();
    g.guest.write(
      encodeFrame({
        version: 1,
        type: "reply",
        identity: IDENTITY,
        seq: hello.seq,
        requestId: hello.requestId,
        operation: "EXECUTE",
        actionId: "action-1",
        ok: true,
      }),
    );
    await expectFailure(p, "protocol_mismatch", "outcome_uncertain");
  });

  test("an unsolicited frame, or a second reply, closes invalid_response", async () => {
    const g = scriptedGuest();
    g.guest.write(encodeFrame({ hello: 1 }));
    await sleep(5);
    expect(g.hostTransport.closeCode).toBe("invalid_response");
    const g2 = scriptedGuest();
    const p = g2.client.ready();
    const hello = await g2.nextRequest();
    g2.reply(hello);
    g2.reply(hello);
    await p.catch(() => undefined);
    await sleep(5);
    expect(g2.hostTransport.closeCode).toBe("invalid_response");
  });

  test("malformed bytes from the guest close invalid_response; a clean end between frames is transport_failed", async () => {
    const g = scriptedGuest();
    const p = g.client.ready();
    await g.nextRequest();
    g.guest.write(Buffer.from([0, 0, 0, 3, 0xc0, 0xaf, 0x22]));
    await expectFailure(p, "invalid_response", "outcome_uncertain");
    const g2 = scriptedGuest();
    const p2 = g2.client.ready();
    await g2.nextRequest();
    g2.guest.end();
    await expectFailure(p2, "transport_failed", "outcome_uncertain");
  });

  test("observe: an error reply or a non-canonical / invalid PNG closes invalid_response", async () => {
    const b64 = Buffer.from(PNG_BYTES).toString("base64");
    const badObs = [
      { png: `${b64.slice(0, -4)}AAA=`, stateSignature: "s" }, // truncated PNG
      { png: Buffer.from(new Uint8Array(64)).toString("base64"), stateSignature: "s" },
      // Non-canonical base64: the last char carries non-zero padding bits.
      { png: "QUJDRA==".replace("A==", "B=="), stateSignature: "s" },
    ];
    for (const observation of badObs) {
      const g = scriptedGuest();
      const p = g.client.executor.observe();
      await g.handshake();
      g.reply(await g.nextRequest(), { ok: true, observation });
      await expectFailure(p, "invalid_response", "outcome_uncertain");
    }
    const g = scriptedGuest();
    const p = g.client.executor.observe();
    await g.handshake();
    g.reply(await g.nextRequest(), { ok: false, error: { code: "execution_failed", disposition: "not_dispatched" } });
    await expectFailure(p, "invalid_response", "outcome_uncertain");
  });
});

describe("correlation and identity (dispatcher side)", () => {
  const req = (seq: number, operation: string, extra: Record<string, unknown> = {}) => ({
    version: 1,
    type: "request",
    identity: IDENTITY,
    seq,
    requestId: `request-${seq}`,
    operation,
    ...(operation === "EXECUTE" ? { actionId: `action-${seq}`, action: { kind: "screenshot" } } : {}),
    ...extra,
  });
  function rawHost() {
    const { host, guest } = streamPair();
    const gt = new BrowserControlTransport(guest);
    const exec = recordingExecutor();
    attachBrowserControlDispatcher({
      transport: gt,
      identity: IDENTITY,
      executor: exec,
      isAuthorized: () => true,
      authoritySignal: new AbortController().signal,
    });
    const replies = () => framesWritten(guest);
    return { host, gt, exec, replies };
  }
  const cases: Array<[string, Array<Record<string, unknown>>, BrowserControlErrorCode, boolean]> = [
    ["HELLO not first", [req(1, "OBSERVE")], "protocol_mismatch", true],
    ["HELLO with seq 2", [req(2, "HELLO")], "protocol_mismatch", false],
    ["second HELLO", [req(1, "HELLO"), req(2, "HELLO")], "protocol_mismatch", true],
    ["wrong seq", [req(1, "HELLO"), req(3, "OBSERVE")], "protocol_mismatch", false],
    ["repeated seq (replay)", [req(1, "HELLO"), req(2, "EXECUTE"), req(2, "EXECUTE")], "protocol_mismatch", false],
    ["identity mismatch", [req(1, "HELLO", { identity: { ...IDENTITY, generation: "x" } })], "protocol_mismatch", false],
    ["requestId mismatch", [req(1, "HELLO"), req(2, "OBSERVE", { requestId: "request-3" })], "invalid_request", true],
    ["actionId mismatch", [req(1, "HELLO"), req(2, "EXECUTE", { actionId: "action-1" })], "invalid_request", true],
    ["unknown field", [req(1, "HELLO"), req(2, "OBSERVE", { extra: 1 })], "invalid_request", true],
    ["invalid action", [req(1, "HELLO"), req(2, "EXECUTE", { action: { kind: "click", x: 2e6, y: 0 } })], "invalid_request", true],
    ["speak action", [req(1, "HELLO"), req(2, "EXECUTE", { action: { kind: "speak", text: "hi" } })], "invalid_request", true],
    ["FINISH_RECORDING", [req(1, "HELLO"), req(2, "FINISH_RECORDING")], "invalid_request", false],
    ["not an object", [req(1, "HELLO"), [1, 2] as unknown as Record<string, unknown>], "invalid_request", false],
  ];
  test.each(cases)("%s closes the channel", async (_name, frames, code, replied) => {
    const h = rawHost();
    for (const f of frames) {
      h.host.write(encodeFrame(f));
      await sleep(3);
    }
    await sleep(5);
    expect(h.gt.closeCode).toBe(code);
    const errs = h.replies().filter((r) => r.ok === false);
    if (replied) expect(errs.map((r) => r.error)).toEqual([{ code, disposition: "not_dispatched" }]);
    else expect(errs).toEqual([]);
    expect(h.exec.calls.filter((c) => c.op === "execute").length).toBe(frames.filter((f) => f.operation === "EXECUTE").length > 1 ? 1 : 0);
  });
});

describe("construction", () => {
  test("invalid identity, timeouts, executor or missing authoritySignal are refused synchronously", () => {
    const t = () => new BrowserControlTransport(streamPair().host);
    const refuse = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(isBrowserControlError(e) && e.errorCode === "invalid_request" && e.disposition === "not_dispatched").toBe(true);
        return;
      }
      throw new Error("expected refusal");
    };
    refuse(() => createBrowserControlClient({ transport: t(), identity: { ...IDENTITY, challenge: "bad token" } }));
    refuse(() => createBrowserControlClient({ transport: t(), identity: { ...IDENTITY, extra: "x" } as never }));
    refuse(() => createBrowserControlClient({ transport: t(), identity: IDENTITY, requestTimeoutMs: 999 }));
    refuse(() => createBrowserControlClient({ transport: t(), identity: IDENTITY, requestTimeoutMs: 60_001 }));
    createBrowserControlClient({ transport: t(), identity: IDENTITY, requestTimeoutMs: 60_000 }).close();
    const base = { transport: t(), identity: IDENTITY, executor: recordingExecutor(), isAuthorized: () => true, authoritySignal: new AbortController().signal };
    refuse(() => attachBrowserControlDispatcher({ ...base, authoritySignal: undefined as never }));
    refuse(() => attachBrowserControlDispatcher({ ...base, executor: {} as never }));
    refuse(() => attachBrowserControlDispatcher({ ...base, isAuthorized: undefined as never }));
    refuse(() => attachBrowserControlDispatcher({ ...base, identity: { ...IDENTITY, generation: "" } }));
    refuse(() => new BrowserControlTransport(streamPair().host, { frameDeadlineMs: 35_001 }));
  });
});
