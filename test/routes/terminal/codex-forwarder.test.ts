/**
 * The in-sandbox forwarder on the real engine: a sandbox with no network reaches the host's
 * gateway at http://127.0.0.1:41400/v1 through the mounted socket, as the participant user; a
 * taken port is HUMANISH_MODEL_GATEWAY_PORT_IN_USE.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createDockerClient } from "../../../src/docker/index.ts";
import { openModelSeat, SANDBOX_MODEL_PORT, startSandboxForwarder } from "../../../src/lanes/docker-terminal/model-seat.ts";
import { resolveEndpoint, SpendBudget } from "../../../src/models/index.ts";
import { ensureImage } from "../../../src/runtime/images.ts";
import { sandboxRecipe } from "../../../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../../../src/sandbox/index.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { dockerSocketPath, requireDocker } from "../../support/prereq.ts";

const dec = new TextDecoder();
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  for (const s of sandboxes) expect((await s.release()).outcome).toBe("released");
});

async function sandboxWith(mount: { hostPath: string; containerPath: string; readOnly: boolean }): Promise<Sandbox> {
  await requireDocker();
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  const image = await ensureImage(docker, sandboxRecipe);
  const s = await createDockerSandboxProvider({ docker }).create({
    runId: `test-fwd-${randomBytes(4).toString("hex")}`,
    image: image.tag,
    network: "none",
    mounts: [mount],
    labels: { "humanish.test": "codex-forwarder" },
  });
  sandboxes.push(s);
  return s;
}

describe("sandbox model forwarder", () => {
  test("with network none, the participant user reaches the gateway at 127.0.0.1 (and only POST /v1/responses is forwarded)", async () => {
    const seat = openModelSeat({
      endpoint: resolveEndpoint({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
      runtimeAuth: "openai-egress",
      key: { sourceName: "CODEX_API_KEY", value: "sk-not-used-here-0000" },
      maxUsd: 0,
      maxTotalUsd: null,
      study: new SpendBudget("scenario.caps.maxTotalUsd", 0),
    });
    try {
      const s = await sandboxWith(seat.mount);
      await startSandboxForwarder(s, seat.gateway.socketName, new AbortController().signal);
      const script = `fetch("http://127.0.0.1:${SANDBOX_MODEL_PORT}/v1/models",{headers:{authorization:"Bearer "+process.env.T}}).then(async r=>console.log(r.status, await r.text()))`;
      const r = await s.exec({ cmd: ["node", "-e", script], user: "user", env: { T: seat.access.token }, timeoutMs: 30_000 });
      expect(dec.decode(r.stdout)).toContain("404");
      expect(dec.decode(r.stdout)).toContain("humanish_not_forwarded");
      // maxUsd 0: a Responses call is refused at the gateway, OpenAI-shaped.
      const post = `fetch("http://127.0.0.1:${SANDBOX_MODEL_PORT}/v1/responses",{method:"POST",headers:{authorization:"Bearer "+process.env.T,"content-type":"application/json"},body:JSON.stringify({model:"gpt-5.1",input:"hi"})}).then(async r=>console.log(r.status, await r.text()))`;
      const p = await s.exec({ cmd: ["node", "-e", post], user: "user", env: { T: seat.access.token }, timeoutMs: 30_000 });
      expect(dec.decode(p.stdout)).toContain("429");
      expect(dec.decode(p.stdout)).toContain("humanish_spend_limit");
      expect(seat.ledger("p1")).toMatchObject({ requests: 2, refused: 1 });
    } finally {
      await seat.close();
    }
  }, 120_000);

  test("a port already taken inside the sandbox is HUMANISH_MODEL_GATEWAY_PORT_IN_USE", async () => {
    const seat = openModelSeat({
      endpoint: resolveEndpoint({}),
      runtimeAuth: "openai-egress",
      key: undefined,
      maxUsd: 0,
      maxTotalUsd: null,
    });
    try {
      const s = await sandboxWith(seat.mount);
      const squat = `nohup node -e 'require("net").createServer().listen(${SANDBOX_MODEL_PORT},"127.0.0.1")' >/dev/null 2>&1 & sleep 1`;
      expect((await s.exec({ cmd: ["bash", "-c", squat], user: "root" })).exitCode).toBe(0);
      const err = await startSandboxForwarder(s, seat.gateway.socketName, new AbortController().signal).catch((e) => e);
      expect(err).toMatchObject({ code: "HUMANISH_MODEL_GATEWAY_PORT_IN_USE" });
    } finally {
      await seat.close();
    }
  }, 120_000);
});
