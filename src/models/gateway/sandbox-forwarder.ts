/**
 * The forwarder that runs inside a seat's sandbox (with the image's own Node, no download): it
 * listens on `127.0.0.1:<port>` and pipes each connection, opaquely, to the gateway's Unix socket
 * mounted into the sandbox. The sandbox then sees its model at `http://127.0.0.1:<port>/v1` and
 * needs no network. It prints `HUMANISH_FORWARDER_READY` once listening, or exits 3 with
 * `HUMANISH_FORWARDER_PORT_IN_USE` when the port is taken.
 *
 * Usage: `node forwarder.cjs <port> <socket path>`.
 */
export const SANDBOX_FORWARDER_SOURCE = `"use strict";
const net = require("node:net");
const [port, sock] = [Number(process.argv[2]), process.argv[3]];
const server = net.createServer((inbound) => {
  const outbound = net.createConnection(sock);
  inbound.pipe(outbound);
  outbound.pipe(inbound);
  const end = () => { inbound.destroy(); outbound.destroy(); };
  inbound.on("error", end); outbound.on("error", end);
  inbound.on("close", end); outbound.on("close", end);
});
server.on("error", (e) => {
  process.stdout.write(e.code === "EADDRINUSE" ? "HUMANISH_FORWARDER_PORT_IN_USE\\n" : "HUMANISH_FORWARDER_FAILED " + e.code + "\\n");
  process.exit(3);
});
server.listen(port, "127.0.0.1", () => process.stdout.write("HUMANISH_FORWARDER_READY\\n"));
`;
