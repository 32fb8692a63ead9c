/**
 * The fake Responses server in its own process for bench/gateway.ts, so the gateway's memory is
 * measured without the fake's. The scenario is picked per request by `metadata.bench`:
 * `big` streams `metadata.bytes` bytes of text; anything else answers a one-line message, after
 * `metadata.delay_ms` ms (a model's time to first token).
 * Prints `READY <baseURL>` on stdout.
 */
import { startFakeOpenAI } from "../test/support/fake-openai/server.ts";

const key = process.argv[2] ?? "fake-bench-key";
const fake = startFakeOpenAI({
  apiKey: key,
  scenario: (req) => {
    const meta = (req.body?.metadata ?? {}) as Record<string, string>;
    if (meta.bench === "big") return { kind: "big", bytes: Number(meta.bytes ?? 10 * 1024 * 1024) };
    return { kind: "response", output: [{ type: "message", text: "ok" }], firstByteDelayMs: Number(meta.delay_ms ?? 0) };
  },
});
process.stdout.write(`READY ${fake.baseURL}\n`);
process.on("SIGTERM", () => void fake.close().then(() => process.exit(0)));
