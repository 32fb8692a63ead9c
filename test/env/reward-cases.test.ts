/**
 * Every reward case end to end on the real Docker engine, each on its own WebSocket session: a verify command writes the
 * override file, the episode's reward and `state.reward_override_ignored` hold the right values.
 * Verify lists are [writer, false, false, false] so the pass rate (0.25) differs from every
 * accepted override value.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);

import { REWARD_OVERRIDE_PATH } from "../../src/env/reward.ts";
import { startTestServer, type TestServer, terminal, WsClient } from "./support.ts";

const F = REWARD_OVERRIDE_PATH;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxConcurrent: 1 });
});
afterAll(async () => {
  await t?.cleanup();
});

async function episode(writer: string, stepCommand?: string): Promise<{ reward: number | null; state: any; result: any }> {
  const ws = await WsClient.connect(t.server.url);
  try {
    const reset = await ws.reset({ verify: [writer, "false", "false", "false"] });
    expect(reset.done).toBe(false);
    if (stepCommand) {
      const s = await ws.step(terminal({ command: stepCommand }));
      expect(s.observation.result.exit_code).toBe(0);
    }
    const fin = await ws.step(terminal({ final_answer: "done" }));
    expect(fin.done).toBe(true);
    const state = await ws.state();
    expect(state.reward).toBe(fin.reward);
    expect(state.last_reward).toBe(fin.reward);
    return { reward: fin.reward, state, result: fin.observation.result };
  } finally {
    ws.close();
  }
}

describe("reward override file (docker)", () => {
  test("no override file: pass rate, nothing ignored", async () => {
    const r = await episode("true");
    expect(r.reward).toBe(0.25);
    expect(r.state.reward_override_ignored).toBeNull();
    expect(r.state.reward_source).toBe("pass_rate");
  });

  test("a stale file written by an agent step is deleted before verify", async () => {
    const r = await episode("true", `mkdir -p ${F.replace(/\/[^/]+$/, "")} && echo 1 > ${F} && cat ${F}`);
    expect(r.reward).toBe(0.25);
    expect(r.state.reward_override_ignored).toBeNull();
    expect(r.state.reward_source).toBe("pass_rate");
  });

  const accepted: [string, string, number][] = [
    ["0.5", `printf '0.5\\n' > ${F}`, 0.5],
    ["-1", `echo -1 > ${F}`, -1],
    ["2.5", `echo 2.5 > ${F}`, 2.5],
  ];
  for (const [name, writer, value] of accepted) {
    test(`override ${name} is used as written`, async () => {
      const r = await episode(writer);
      expect(r.reward).toBe(value);
      expect(r.state.reward_source).toBe("override");
      expect(r.state.reward_override_ignored).toBeNull();
      expect(r.result.reward).toBe(value);
    });
  }

  const ignored: [string, string, string][] = [
    ["nan", `echo nan > ${F}`, "not_decimal"],
    ["inf", `echo inf > ${F}`, "not_decimal"],
    ["-inf", `echo -inf > ${F}`, "not_decimal"],
    ["Infinity", `echo Infinity > ${F}`, "not_decimal"],
    ["empty", `: > ${F}`, "empty"],
    ["abc", `echo abc > ${F}`, "not_decimal"],
    ["0x10", `echo 0x10 > ${F}`, "not_decimal"],
    ["1_000", `echo 1_000 > ${F}`, "not_decimal"],
    ["0.5\\n0.7", `printf '0.5\\n0.7\\n' > ${F}`, "multiple_lines"],
    ["1e309", `echo 1e309 > ${F}`, "not_finite"],
    ["a 1 MiB file", `head -c 1048576 /dev/zero | tr '\\0' '1' > ${F}`, "too_large"],
    ["a FIFO (must not block the reader)", `mkfifo ${F}`, "not_regular_file"],
    ["a directory", `mkdir ${F}`, "not_regular_file"],
  ];
  for (const [name, writer, reason] of ignored) {
    test(`override ${name} is ignored (${reason}); the pass rate is used`, async () => {
      const r = await episode(writer);
      expect(r.reward).toBe(0.25);
      expect(r.state.reward_source).toBe("pass_rate");
      // A reader that blocked (on the FIFO, say) would hit the probe's deadline and give its
      // reason ("unreadable"), not this one.
      expect(r.state.reward_override_ignored?.reason).toBe(reason);
      expect(r.result.reward_override_ignored?.reason).toBe(reason);
    });
  }
});
