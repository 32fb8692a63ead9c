/**
 * The guest half of the two-process test: listens on a private Unix socket (argv[2]), serves
 * one browser-control connection with a fake executor that returns real PNG screenshots, and
 * prints one JSON line per executed action plus a final summary line to stdout.
 */
import { createServer } from "node:net";
import { attachBrowserControlDispatcher, BrowserControlError, type BrowserExecutor, createSocketTransport } from "../../src/browser-control/index.ts";
import { makePng } from "../support/png.ts";
import { IDENTITY } from "./support.ts";

const socketPath = process.argv[2];
if (!socketPath) throw new Error("usage: guest-process.ts <socket path>");
let observed = 0;
const executed: unknown[] = [];

const executor: BrowserExecutor = {
  async observe() {
    observed++;
    return { png: makePng(64, 48, { seed: observed, alpha: true }), stateSignature: `frame-${observed}`, title: "fixture" };
  },
  async execute(action, signal) {
    if (signal.aborted) throw new BrowserControlError("session_revoked", "not_dispatched");
    if (action.kind === "click" && action.x < 0) throw new BrowserControlError("action_rejected", "not_dispatched");
    executed.push(action);
    process.stdout.write(`${JSON.stringify({ executed: action })}\n`);
  },
};

const server = createServer((socket) => {
  server.close();
  const authority = new AbortController();
  attachBrowserControlDispatcher({
    transport: createSocketTransport(socket),
    identity: IDENTITY,
    executor,
    isAuthorized: () => true,
    authoritySignal: authority.signal,
  });
  socket.on("close", () => {
    process.stdout.write(`${JSON.stringify({ summary: { observed, executed: executed.length } })}\n`);
    process.exit(0);
  });
});
server.listen(socketPath, () => process.stdout.write("LISTENING\n"));
