/**
 * Every reward case of issue 6 end to end on the real Docker engine: a verify command writes the
 * override file, the episode's reward and `state.reward_override_ignored` hold the right values.
 * Verify lists are [writer, false, false, false] so the pass rate (0.25) differs from every
 * accepted override value.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";

setDefaultTimeout(120_000);

import { REWARD_OVERRIDE_PATH } from "../../src/env/reward.ts";
import { get, post, startTestServer, type TestServer, terminal } from "./support.ts";

const F = REWARD_OVERRIDE_PATH;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxConcurrent: 1 });
});
afterAll(async () => {
  await t?.cleanup();
});

async function episode(writer: string, stepCommand?: string): Promise<{ reward: number | null; state: any; result: any }> {
  const base = t.server.url;
  const reset = await post(base, "/reset", { verify: [writer, "false", "false", "false"] });
  expect(reset.status).toBe(200);
  expect(reset.body.done).toBe(false);
  if (stepCommand) {
    const s = await post(base, "/step", terminal({ command: stepCommand }));
    expect(s.body.observation.result.exit_code).toBe(0);
  }
  const fin = await post(base, "/step", terminal({ final_answer: "done" }));
  expect(fin.body.done).toBe(true);
  const state = (await get(base, "/state")).body;
  expect(state.reward).toBe(fin.body.reward);
  return { reward: fin.body.reward, state, result: fin.body.observation.result };
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
      const started = Date.now();
      const r = await episode(writer);
      expect(r.reward).toBe(0.25);
      expect(r.state.reward_source).toBe("pass_rate");
      expect(r.state.reward_override_ignored?.reason).toBe(reason);
      expect(r.result.reward_override_ignored?.reason).toBe(reason);
      // The probe's own deadline is 10 s; finishing well inside the command timeout shows no hang.
      expect(Date.now() - started).toBeLessThan(20_000);
    });
  }
});
