import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRunWriter, LatestRunSchema, RunBundleSchema, RunStatusSchema, reopenRunWriter, verifyRun } from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { makePng } from "../support/png.ts";
import { waitUntil } from "../support/wait.ts";
import { CANARY, expectCode, projectPerTest, terminalLedgers, terminalTrace, writeDryRunTerminal, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";

const project = projectPerTest();

function allFiles(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...allFiles(join(dir, e.name), rel));
    else out.push(rel);
  }
  return out;
}

describe("canary secret", () => {
  test("appears in 0 bytes of any file under .humanish (live terminal, live browser, dry run)", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd, "live-1");
    await writeLiveBrowser(cwd, "browser-1");
    await writeDryRunTerminal(cwd, "dry-1");
    const root = join(cwd, ".humanish");
    const files = allFiles(root);
    expect(files.length).toBeGreaterThan(10);
    const needle = Buffer.from(CANARY);
    for (const f of files) {
      const bytes = readFileSync(join(root, f));
      expect({ f, found: bytes.indexOf(needle) }).toEqual({ f, found: -1 });
    }
    // …and the places it was written now say [REDACTED_SECRET].
    expect(readFileSync(join(root, "runs/live-1/terminal-transcript.txt"), "utf8")).toContain("OPENAI_API_KEY=[REDACTED_SECRET]");
    expect(readFileSync(join(root, "runs/live-1/status.json"), "utf8")).not.toContain(CANARY);
  });

  test("a screenshot carrying a secret in its bytes is refused, not written", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "shot-secret", secrets: ["pngsecret-1234"], heartbeatMs: 0 });
    const png = makePng();
    // Insert a tEXt chunk before IEND carrying the secret (a valid PNG otherwise).
    const text = Buffer.concat([Buffer.from("Comment\0"), Buffer.from("pngsecret-1234")]);
    const type = Buffer.from("tEXt");
    const len = Buffer.alloc(4);
    len.writeUInt32BE(text.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([type, text])));
    const iend = png.length - 12;
    const withText = Buffer.concat([Buffer.from(png.slice(0, iend)), len, type, text, crc, Buffer.from(png.slice(iend))]);
    await expectCode(w.writeArtifact("screenshots/001.png", new Uint8Array(withText), { kind: "screenshot" }), "HUMANISH_REDACTION_FAILED");
    expect(existsSync(join(w.runDir, "screenshots/001.png"))).toBe(false);
    w.close();
  });
});

function crc32(buf: Buffer): number {
  let c = ~0 >>> 0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

describe("run writer", () => {
  test("an existing run id is refused", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "same-id", secrets: [], heartbeatMs: 0 });
    w.close();
    await expectCode(() => createRunWriter({ cwd, runId: "same-id", secrets: [], heartbeatMs: 0 }), "HUMANISH_RUN_ID_IN_USE");
  });

  test("a DEL byte in participant output is escaped in JSON artifacts, so the writer's own bundle verifies", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd);
    const r = await reopenRunWriter({ cwd, runId: "live-1", secrets: [] });
    const base = terminalTrace();
    const items = base.items.map((i) => (i.kind === "command" ? { ...i, command: { ...i.command!, outputTail: "random bytes \u007f\u0080 end" } } : i));
    await r.writeJson("actor.json", { ...base, items }, { kind: "actor-trace" });
    await r.appendNdjson("terminal-events.ndjson", { at: "2026-11-30T00:00:00.000Z", stream: "stdout", chunk: "del \u007f here" }, { kind: "terminal-events" });
    await r.finalize();
    r.close();
    const runDir = join(cwd, ".humanish", "runs", "live-1");
    for (const f of ["actor.json", "terminal-events.ndjson", "run.json"])
      expect({ f, del: readFileSync(join(runDir, f)).includes(0x7f) }).toEqual({ f, del: false });
    expect(JSON.parse(readFileSync(join(runDir, "actor.json"), "utf8")).items[0].command.outputTail).toBe("random bytes \u007f\u0080 end");
    const v = await verifyRun(runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.ok).toBe(true);
  });

  test("invalid run ids are refused", async () => {
    const cwd = project();
    for (const id of ["", "../x", "a/b", "A-upper", "-lead", "a--b", "x".repeat(129), ".", "latest.json"]) {
      await expectCode(() => createRunWriter({ cwd, runId: id, secrets: [], heartbeatMs: 0 }), "HUMANISH_INVALID_RUN_ID");
    }
  });

  test("a symlinked .humanish/runs is refused", async () => {
    const cwd = project();
    mkdirSync(join(cwd, "elsewhere"));
    mkdirSync(join(cwd, ".humanish"));
    symlinkSync(join(cwd, "elsewhere"), join(cwd, ".humanish", "runs"));
    await expectCode(() => createRunWriter({ cwd, runId: "r1", secrets: [], heartbeatMs: 0 }), "HUMANISH_UNSAFE_PROJECT_PATH");
  });

  test("artifact paths are contained", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "contain", secrets: [], heartbeatMs: 0 });
    for (const p of ["../escape.txt", "/abs.txt", "a/../../b", "run.json", "status.json", "a//b", "x\\y", ".tmp-abc", "http://x/y"]) {
      await expectCode(w.writeArtifact(p, "x", { kind: "log" }), "HUMANISH_UNSAFE_ARTIFACT_PATH");
    }
    mkdirSync(join(cwd, "outside"));
    symlinkSync(join(cwd, "outside"), join(w.runDir, "linked"));
    await expectCode(w.writeArtifact("linked/x.txt", "x", { kind: "log" }), "HUMANISH_UNSAFE_ARTIFACT_PATH");
    expect(existsSync(join(cwd, "outside", "x.txt"))).toBe(false);
    w.close();
  });

  test("writes are atomic: no temp files remain, and a rewrite replaces the whole file", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "atomic", secrets: [], heartbeatMs: 0 });
    const big = "a".repeat(1 << 20);
    await Promise.all([w.writeArtifact("log.txt", big, { kind: "log" }), w.writeArtifact("log.txt", "short", { kind: "log" })]);
    expect(readFileSync(join(w.runDir, "log.txt"), "utf8")).toBe("short");
    const ino1 = statSync(join(w.runDir, "log.txt")).ino;
    await w.writeArtifact("log.txt", "replaced", { kind: "log" });
    // rename(2) installs a new inode: a reader never sees a half-written file.
    expect(statSync(join(w.runDir, "log.txt")).ino).not.toBe(ino1);
    expect(allFiles(w.runDir).filter((f) => f.includes(".tmp-"))).toEqual([]);
    w.close();
  });

  test("schema-checked kinds fail at write time with the field path", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "schema", secrets: [], heartbeatMs: 0 });
    try {
      await w.writeJson("actor.json", { schema: "humanish.actor-trace.v1", participantId: "p1" }, { kind: "actor-trace" });
      throw new Error("expected failure");
    } catch (e) {
      expect(isHumanishError(e, "HUMANISH_INVALID_ARTIFACT")).toBe(true);
      expect((e as Error).message).toContain("actorType");
    }
    await expectCode(
      w.appendNdjson("terminal-events.ndjson", { at: "x", stream: "stdout", chunk: "" }, { kind: "terminal-events" }),
      "HUMANISH_INVALID_ARTIFACT",
    );
    await expectCode(w.writeArtifact("screenshots/001.png", new TextEncoder().encode("not a png"), { kind: "screenshot" }), "HUMANISH_INVALID_ARTIFACT");
    await expectCode(w.writeArtifact("shots/001.png", makePng(), { kind: "screenshot" }), "HUMANISH_INVALID_ARTIFACT");
    w.close();
  });

  test("run.json lists every artifact with size and SHA-256 of the bytes on disk; latest.json points here", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd, "manifest");
    const bundle = RunBundleSchema.parse(JSON.parse(readFileSync(join(w.runDir, "run.json"), "utf8")));
    expect(bundle.artifacts.map((a) => a.path).sort()).toEqual(
      ["actor.json", "sandbox-receipts.ndjson", "terminal-events.ndjson", "terminal-ledgers.json", "terminal-transcript.txt"].sort(),
    );
    for (const a of bundle.artifacts) {
      const bytes = readFileSync(join(w.runDir, a.path));
      expect(a.bytes).toBe(bytes.length);
      expect(a.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    expect(bundle.cwd).toBe("[target-cwd]");
    expect(bundle.review.summary).toBe("1/1 reached the goal; tasks: pretty-print 1/1 · filter 0/1");
    const latest = LatestRunSchema.parse(JSON.parse(readFileSync(join(cwd, ".humanish/runs/latest.json"), "utf8")));
    expect(latest).toMatchObject({ runId: "manifest", path: ".humanish/runs/manifest" });
    const status = RunStatusSchema.parse(JSON.parse(readFileSync(join(w.runDir, "status.json"), "utf8")));
    expect(status.state).toBe("finished");
    expect(status.outcome?.verdict).toBe("pass");
    // the cwd path written into an event became [target-cwd]
    expect(readFileSync(join(w.runDir, "terminal-events.ndjson"), "utf8")).toContain("[target-cwd]/out.json");
  });

  test("a failed run with almost nothing recorded still finalizes into a bundle that verifies and says why", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "early-fail", secrets: [], heartbeatMs: 0, route: "terminal", mode: "live" });
    await w.writeStatus({ phase: "allocate" });
    const input = {
      route: "terminal",
      mode: "live",
      target: "docker",
      createdAt: new Date(Date.now() - 1000).toISOString(),
      lab: { id: "jq", source: { ref: "embedded:jq", sha256: "b".repeat(64) } },
      subject: { source: "terminal-product", name: "jq", provenance: "unpinned" },
      outcome: { state: "failed", error: { code: "HUMANISH_DOCKER_UNREACHABLE", message: "no engine at the socket" } },
      caps: { maxUsd: 0, maxJobs: 1, maxMinutes: 5 },
    } as const;
    // Without the (possibly empty) terminal files, only the terminal evidence check fails.
    let b = await w.finalize(input);
    expect(b.review.verdict).toBe("fail");
    expect(b.review.gaps.join(" ")).toContain("HUMANISH_DOCKER_UNREACHABLE");
    let v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["terminal-product evidence"]);
    // A live terminal run always writes its ledgers, events and transcript, even empty.
    await w.writeArtifact("terminal-events.ndjson", "", { kind: "terminal-events" });
    await w.writeArtifact("terminal-transcript.txt", "", { kind: "terminal-transcript" });
    await w.writeJson("terminal-ledgers.json", terminalLedgers([]), { kind: "terminal-ledgers" });
    b = await w.finalize();
    v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.ok).toBe(true);
  });

  test("an interrupted run records the signal", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "interrupted", secrets: [], heartbeatMs: 0 });
    const b = await w.finalize({
      route: "browser",
      mode: "live",
      target: "local",
      createdAt: new Date(Date.now() - 1000).toISOString(),
      lab: { id: "todo", source: { ref: "embedded:todo", sha256: "b".repeat(64) } },
      subject: { source: "app-url", appUrl: "http://127.0.0.1:3000/", provenance: "undeclared" },
      outcome: { state: "interrupted", interrupted: "SIGINT" },
    });
    expect(b.outcome).toEqual({ state: "interrupted", interrupted: "SIGINT" });
    expect(b.review.gaps).toContain("run interrupted by SIGINT");
  });

  test("finalize input errors name the field", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "bad-input", secrets: [], heartbeatMs: 0 });
    try {
      await w.finalize({ route: "terminal" } as never);
      throw new Error("expected failure");
    } catch (e) {
      expect(isHumanishError(e, "HUMANISH_INVALID_RUN_BUNDLE")).toBe(true);
      expect((e as Error).message).toContain("mode");
    }
    w.close();
  });

  test("artifacts added after finalize: write + finalize() again, or reopen from another process", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd, "report-after");
    await w.writeArtifact("report/index.html", "<!doctype html><p>report</p>", { kind: "report" });
    let b = await w.finalize();
    expect(b.artifacts.some((a) => a.path === "report/index.html")).toBe(true);
    expect((await verifyRun(w.runDir)).ok).toBe(true);

    const r = await reopenRunWriter({ cwd, runId: "report-after", secrets: [CANARY] });
    await r.writeArtifact("report/index.html", `<!doctype html><p>v2 ${CANARY}</p>`, { kind: "report" });
    b = await r.finalize();
    expect(readFileSync(join(w.runDir, "report/index.html"), "utf8")).toBe("<!doctype html><p>v2 [REDACTED_SECRET]</p>");
    const v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    await expectCode(reopenRunWriter({ cwd, runId: "nope", secrets: [] }), "HUMANISH_RUN_NOT_FOUND");
  });

  test("status.json is touched while running by the heartbeat", async () => {
    const cwd = project();
    let t = Date.parse("2026-11-30T03:00:00.000Z");
    const w = createRunWriter({ cwd, runId: "beat", secrets: [], heartbeatMs: 20, now: () => new Date((t += 1000)) });
    await w.writeStatus({ phase: "participate", detail: "step 1" });
    const read = () => RunStatusSchema.parse(JSON.parse(readFileSync(join(w.runDir, "status.json"), "utf8")));
    const first = read();
    // Nothing but the heartbeat writes status.json now: a newer updatedAt is a beat.
    await waitUntil(() => Date.parse(read().updatedAt) > Date.parse(first.updatedAt), "a heartbeat to touch status.json");
    const later = read();
    w.close();
    expect(later.state).toBe("running");
    expect(later.phase).toBe("participate");
    expect(later.pid).toBe(process.pid);
    expect(Date.parse(later.updatedAt)).toBeGreaterThan(Date.parse(first.updatedAt));
    expect(later.startedAt).toBe(first.startedAt);
  });

  test("a self-contained report keeps embedded PNG payloads byte-exact and verify re-admits them", async () => {
    const cwd = project();
    const png = makePng(6, 5, { seed: 3 });
    const b64 = Buffer.from(png).toString("base64");
    // A "secret" that happens to occur inside the base64 payload: a chance match, not a disclosure.
    const chance = b64.slice(20, 28);
    const { w } = await writeLiveTerminal(cwd, "embedded", { secrets: [chance] });
    const shapeLike = `AIza${"B".repeat(24)}`;
    const html = `<!doctype html><img src="data:image/png;base64,${b64}"><p>key ${shapeLike} path /tmp/x</p>`;
    await w.writeArtifact("report/index.html", html, { kind: "report" });
    await w.finalize();
    const written = readFileSync(join(w.runDir, "report/index.html"), "utf8");
    expect(written).toContain(`data:image/png;base64,${b64}"`);
    expect(written).toContain("key [REDACTED_SECRET] path [REDACTED_LOCAL_PATH]");
    let v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.checks.find((c) => c.name === "screenshots admitted")?.message).toContain("1 embedded PNG(s)");
    expect(v.shareSafety.status).toBe("local_only");
    // Line-wrapped payloads (as the report writes them) are recognised too.
    const wrapped = b64.match(/.{1,16}/g)!.join("\n");
    await w.writeArtifact("report/index.html", `<!doctype html><img src="data:image/png;base64,${wrapped}">`, { kind: "report" });
    await w.finalize();
    v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok)).toEqual([]);
    expect(v.checks.find((c) => c.name === "screenshots admitted")?.message).toContain("1 embedded PNG(s)");
    // A corrupted embedded image fails admission.
    const bad = `<!doctype html><img src="data:image/png;base64,${b64.slice(0, -8)}AAAAAAAA">`;
    await w.writeArtifact("report/index.html", bad, { kind: "report" });
    await w.finalize();
    v = await verifyRun(w.runDir);
    expect(v.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["screenshots admitted"]);
  });

  test("a secret value that happens to occur inside a digest never rewrites the manifest", async () => {
    const cwd = project();
    const digest = createHash("sha256").update("hello").digest("hex");
    const w = createRunWriter({ cwd, runId: "digest", secrets: [digest.slice(8, 16)], heartbeatMs: 0 });
    await w.writeArtifact("x.log", "hello", { kind: "log" });
    const b = await w.finalize({
      route: "terminal",
      mode: "dry-run",
      target: "docker",
      createdAt: new Date(Date.now() - 5).toISOString(),
      lab: { id: "x", source: { ref: "embedded:x", sha256: "d".repeat(64) } },
      subject: { source: "terminal-product", name: "x", provenance: "unpinned" },
    });
    expect(b.artifacts).toEqual([{ path: "x.log", kind: "log", bytes: 5, sha256: digest }]);
    expect((await verifyRun(w.runDir)).ok).toBe(true);
  });

  test("artifact names carrying a secret value or shape are refused", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "names", secrets: ["name-secret-9"], heartbeatMs: 0 });
    await expectCode(w.writeArtifact("logs/name-secret-9.txt", "x", { kind: "log" }), "HUMANISH_UNSAFE_ARTIFACT_PATH");
    await expectCode(w.writeArtifact(`logs/sk-proj-${"a".repeat(24)}.txt`, "x", { kind: "log" }), "HUMANISH_UNSAFE_ARTIFACT_PATH");
    w.close();
  });

  test("addArtifact lists a file written by other means, after checking it", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "add", secrets: ["added-secret-1"], heartbeatMs: 0 });
    writeFileSync(join(w.runDir, "extra.log"), "line with added-secret-1\n");
    await w.addArtifact("extra.log", { kind: "log" });
    expect(readFileSync(join(w.runDir, "extra.log"), "utf8")).toBe("line with [REDACTED_SECRET]\n");
    await expectCode(w.addArtifact("missing.log", { kind: "log" }), "HUMANISH_INVALID_ARTIFACT");
    w.close();
  });
});
