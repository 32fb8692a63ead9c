/**
 * The public-safety scan and the redaction check read terminal event streams joined: a secret
 * split across two `chunk`s (each clean alone) is found once the stream's chunks are
 * concatenated in order.
 */
import { describe, expect, test } from "bun:test";
import { createRunWriter, findSensitive, type VerifyResult, verifyFiles, verifyRun } from "../../src/bundle/index.ts";
import { joinedStreams } from "../../src/bundle/verify/scan.ts";
import { projectPerTest, writeLiveTerminal } from "./helpers.ts";
import { loadFiles, resign, testKey, textOf, withFile } from "./memory.ts";

const project = projectPerTest();
/** `sk-proj-` + 30 chars: an OpenAI key shape. */
const KEY = `sk-proj-${"Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy"}`;

function failed(v: VerifyResult): string[] {
  return v.checks.filter((c) => !c.ok).map((c) => c.name);
}

describe("joined chunk streams", () => {
  test("joinedStreams concatenates each stream's chunks in order", () => {
    const lines = [
      { at: "2026-11-30T02:00:00.000Z", stream: "stdout", chunk: "ab" },
      { at: "2026-11-30T02:00:00.000Z", stream: "stderr", chunk: "X" },
      { at: "2026-11-30T02:00:01.000Z", stream: "stdout", chunk: "cd" },
    ];
    const m = joinedStreams(`${lines.map((l) => JSON.stringify(l)).join("\n")}\nnot json\n`);
    expect([...m]).toEqual([
      ["stdout", "abcd"],
      ["stderr", "X"],
    ]);
  });

  test("a key split in two halves across events, written by the real writer, fails verify", async () => {
    const half = KEY.length / 2;
    const [a, b] = [KEY.slice(0, half), KEY.slice(half)];
    expect(findSensitive(a)).toEqual([]);
    expect(findSensitive(b)).toEqual([]);
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    const w2 = createRunWriter({ cwd, runId: "split-1", secrets: [], route: "terminal", mode: "live", heartbeatMs: 0 });
    // copy the live bundle's evidence, with the key split across two stdout events
    for (const f of await loadFiles(w.runDir)) {
      if (f.path === "terminal-events.ndjson" || (f.path.endsWith(".json") && !["actor.json", "terminal-ledgers.json"].includes(f.path))) continue;
      if (f.path === "sandbox-receipts.ndjson") {
        for (const line of new TextDecoder().decode(f.bytes).trim().split("\n")) await w2.appendNdjson(f.path, JSON.parse(line), { kind: "sandbox-receipts" });
        continue;
      }
      const kind = f.path === "actor.json" ? "actor-trace" : f.path === "terminal-ledgers.json" ? "terminal-ledgers" : "terminal-transcript";
      await w2.writeArtifact(f.path, f.bytes, { kind });
    }
    await w2.appendNdjson("terminal-events.ndjson", { at: "2026-11-30T02:00:00.000Z", stream: "stdout", chunk: `key: ${a}` }, { kind: "terminal-events" });
    await w2.appendNdjson("terminal-events.ndjson", { at: "2026-11-30T02:00:01.000Z", stream: "stderr", chunk: "noise" }, { kind: "terminal-events" });
    await w2.appendNdjson("terminal-events.ndjson", { at: "2026-11-30T02:00:02.000Z", stream: "stdout", chunk: `${b} done\n` }, { kind: "terminal-events" });
    await w2.finalize(input);
    const v = await verifyRun(w2.runDir);
    expect(failed(v)).toEqual(["redaction passed", "public-safety scan"]);
    expect(v.checks.find((c) => c.name === "public-safety scan")?.message).toContain("terminal-events.ndjson: joined stdout: openai-key shape across chunks");
    expect(v.shareSafety.status).toBe("blocked");
  });

  test("the key split at every offset is found (in memory, re-signed each time)", async () => {
    const { w } = await writeLiveTerminal(project());
    const key = testKey();
    const base = await loadFiles(w.runDir);
    const events = textOf(base, "terminal-events.ndjson");
    const clean = await verifyFiles({ run: w.runId, files: resign(base, w.runId, key), trust: key.trust });
    expect(clean.ok).toBe(true);
    for (let k = 1; k < KEY.length; k++) {
      const lines = [
        { at: "2026-11-30T02:00:00.000Z", stream: "stdout", chunk: `value ${KEY.slice(0, k)}` },
        { at: "2026-11-30T02:00:00.500Z", stream: "stdout", chunk: `${KEY.slice(k)} end` },
      ];
      const text = `${events}${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
      let files = withFile(base, "terminal-events.ndjson", new TextEncoder().encode(text));
      // re-list the events file with its new size and digest, then re-sign: only the scan can object
      const run = JSON.parse(textOf(files, "run.json"));
      const bytes = new TextEncoder().encode(text);
      const entry = run.artifacts.find((x: { path: string }) => x.path === "terminal-events.ndjson");
      entry.bytes = bytes.length;
      entry.sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
      files = resign(withFile(files, "run.json", new TextEncoder().encode(JSON.stringify(run, null, 2))), w.runId, key);
      const v = await verifyFiles({ run: w.runId, files, trust: key.trust });
      expect({ k, failed: failed(v) }).toEqual({ k, failed: ["redaction passed", "public-safety scan"] });
    }
  });
});
