/**
 * Host and guest in two processes over a private Unix socket: HELLO, OBSERVE and EXECUTE with
 * a fake executor returning real PNGs, every frame crossing a real kernel socket.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserAction, createBrowserControlClient, isBrowserControlError } from "../../src/browser-control/index.ts";
import { admitPng } from "../../src/png/index.ts";
import { connectUnixSocketTransport } from "../../src/runtime/transport.ts";
import { IDENTITY } from "./support.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-bc-")); // mkdtemp creates it 0700
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("two processes: HELLO/OBSERVE/EXECUTE over a private Unix socket with real PNG screenshots", async () => {
  const socketPath = join(dir, "control.sock");
  const guest = Bun.spawn([process.execPath, join(import.meta.dir, "guest-process.ts"), socketPath], { stdout: "pipe", stderr: "pipe" });
  try {
    const reader = guest.stdout.getReader();
    let out = "";
    const decoder = new TextDecoder();
    const readUntil = async (needle: string) => {
      const deadline = Date.now() + 15_000;
      while (!out.includes(needle)) {
        if (Date.now() > deadline) throw new Error(`guest did not print ${needle}; got: ${out}`);
        const { value, done } = await reader.read();
        if (done) throw new Error(`guest exited before ${needle}; stdout: ${out}; stderr: ${await new Response(guest.stderr).text()}`);
        out += decoder.decode(value, { stream: true });
      }
    };
    await readUntil("LISTENING");
    const transport = await connectUnixSocketTransport(socketPath);
    const client = createBrowserControlClient({ transport, identity: IDENTITY, requestTimeoutMs: 10_000 });
    await client.ready();
    const first = await client.executor.observe();
    const admitted = admitPng(first.png);
    expect(admitted.ok && admitted.width === 64 && admitted.height === 48).toBe(true);
    expect(first.stateSignature).toBe("frame-1");
    expect(first.title).toBe("fixture");
    const actions: BrowserAction[] = [
      { kind: "click", x: 10, y: 20 },
      { kind: "type", text: "naïve ✓" },
      { kind: "keypress", keys: ["ENTER"] },
      {
        kind: "drag",
        path: [
          { x: 1, y: 1 },
          { x: 30.5, y: 40.25 },
        ],
      },
      { kind: "wait", ms: 1 },
    ];
    for (const a of actions) await client.executor.execute(a);
    // A pre-dispatch refusal comes back as action_rejected/not_dispatched and the channel survives.
    const refused = await client.executor.execute({ kind: "click", x: -1, y: 0 }).catch((e) => e);
    expect(isBrowserControlError(refused) && refused.errorCode === "action_rejected" && refused.disposition === "not_dispatched").toBe(true);
    const second = await client.executor.observe();
    expect(second.stateSignature).toBe("frame-2");
    expect(Buffer.from(second.png).equals(Buffer.from(first.png))).toBe(false);
    client.close();
    await readUntil("summary");
    const lines = out
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.executed).map((l) => l.executed)).toEqual(actions);
    expect(lines.at(-1)).toEqual({ summary: { observed: 2, executed: actions.length } });
    expect(await guest.exited).toBe(0);
  } finally {
    guest.kill();
  }
}, 30_000);
