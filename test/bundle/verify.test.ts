import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import {
  buildNoSpendProof,
  createRunWriter,
  type RunBundle,
  RunBundleSchema,
  recordOrphanRelease,
  sealRunDir,
  type VerifyResult,
  VerifyResultSchema,
  verifyRun,
  writeSignedAppendix,
} from "../../src/bundle/index.ts";
import { makePng } from "../support/png.ts";
import { projectPerTest, terminalLedgers, terminalTrace, writeDryRunTerminal, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";

const project = projectPerTest();

function failed(v: VerifyResult): string[] {
  return v.checks.filter((c) => !c.ok).map((c) => c.name);
}
function readBundle(dir: string): RunBundle {
  return RunBundleSchema.parse(JSON.parse(readFileSync(join(dir, "run.json"), "utf8")));
}
/**
 * Rewrite run.json by hand and re-sign it with this test process's key — a buggy tool that holds
 * the key — so the semantic check under test is the one that fails, not the signature.
 * (Tamper without the key is covered in test/bundle/verify-signing.test.ts.)
 */
function editBundle(dir: string, fn: (b: Record<string, any>) => void) {
  const b = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
  fn(b);
  writeFileSync(join(dir, "run.json"), JSON.stringify(b, null, 2));
  sealRunDir(dir, basename(dir));
}
/** Overwrite a listed artifact and update its listing (re-signed), as a keyed tool bypassing the writer would. */
function plant(dir: string, rel: string, content: string) {
  writeFileSync(join(dir, rel), content);
  const bytes = readFileSync(join(dir, rel));
  editBundle(dir, (b) => {
    const a = b.artifacts.find((x: { path: string }) => x.path === rel);
    a.bytes = bytes.length;
    a.sha256 = createHash("sha256").update(bytes).digest("hex");
  });
}
/** Change one byte in the middle of a file, keeping ASCII ASCII. */
function flipOneByte(path: string) {
  const bytes = readFileSync(path);
  const i = Math.floor(bytes.length / 2);
  bytes[i] = bytes[i]! ^ 0x01;
  writeFileSync(path, bytes);
}

describe("verifyRun: good bundles", () => {
  test("a dry-run (contract-only) bundle verifies and is share_ready", async () => {
    const cwd = project();
    const w = await writeDryRunTerminal(cwd);
    const v = await verifyRun(w.runDir);
    expect(VerifyResultSchema.parse(v)).toEqual(v);
    expect(failed(v)).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.shareSafety).toEqual({ status: "share_ready", reasons: [] });
    expect(v.checks.find((c) => c.name === "terminal-product evidence")?.message).toContain("dry run");
    expect(v.checks.map((c) => c.name)).toEqual([
      "run.json exists",
      "run schema",
      "run bundle shape",
      "bundle signature",
      "redaction passed",
      "storage containment",
      "artifacts intact",
      "no unlisted files",
      "public-safety scan",
      "artifact schemas",
      "screenshots admitted",
      "terminal-product evidence",
      "browser evidence",
      "study seats",
      "continued run",
      "cleanup proven",
      "caps respected",
      "cost labeling",
      "actor engagement",
      "verdict consistency",
      "headline from checks",
      "analysis records",
      "adapter output",
    ]);
  });

  test("a live terminal bundle verifies", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.shareSafety.status).toBe("share_ready");
  });

  test("a live browser bundle with screenshots verifies, local_only because frames are raw", async () => {
    const cwd = project();
    const w = await writeLiveBrowser(cwd);
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.shareSafety.status).toBe("local_only");
    expect(v.shareSafety.reasons.map((r) => r.code)).toEqual(["RAW_SCREENSHOTS"]);
    expect(v.checks.find((c) => c.name === "screenshots admitted")?.message).toBe("2 PNG file(s) admitted");
  });

  test("status.json is covered by the signature, and still scanned", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const status = JSON.parse(readFileSync(join(w.runDir, "status.json"), "utf8"));
    status.updatedAt = new Date().toISOString();
    writeFileSync(join(w.runDir, "status.json"), JSON.stringify(status));
    expect(failed(await verifyRun(w.runDir))).toEqual(["bundle signature"]);
    // a status rewrite through the writer after the seal re-signs
    await w.writeStatus({ phase: "verify" });
    expect((await verifyRun(w.runDir)).ok).toBe(true);
    status.detail = "opened /Users/alice/secret-project";
    writeFileSync(join(w.runDir, "status.json"), JSON.stringify(status));
    sealRunDir(w.runDir, w.runId);
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["redaction passed", "public-safety scan"]);
    expect(v.shareSafety.status).toBe("blocked");
  });
});

describe("verifyRun: tampering fails closed", () => {
  test("one changed byte in each artifact kind fails", async () => {
    const cwd = project();
    await writeLiveTerminal(cwd, "t-src");
    await writeLiveBrowser(cwd, "b-src");
    const kinds = new Set<string>();
    for (const src of ["t-src", "b-src"]) {
      const dir = join(cwd, ".humanish/runs", src);
      for (const a of readBundle(dir).artifacts) {
        kinds.add(a.kind);
        const original = readFileSync(join(dir, a.path));
        flipOneByte(join(dir, a.path));
        const v = await verifyRun(dir);
        expect({ path: a.path, ok: v.ok }).toEqual({ path: a.path, ok: false });
        expect(failed(v)).toContain("artifacts intact");
        expect(v.shareSafety.status).toBe("blocked");
        writeFileSync(join(dir, a.path), original);
        expect((await verifyRun(dir)).ok).toBe(true);
      }
    }
    expect([...kinds].sort()).toEqual([
      "actor-trace",
      "report",
      "sandbox-receipts",
      "screenshot",
      "terminal-events",
      "terminal-ledgers",
      "terminal-transcript",
    ]);
  });

  test("one changed byte in run.json fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const text = readFileSync(join(w.runDir, "run.json"), "utf8");
    // change one hex digit of a listed digest
    const i = text.indexOf('"sha256": "', text.indexOf('"artifacts": [')) + 11;
    const mutated = text.slice(0, i) + (text[i] === "0" ? "1" : "0") + text.slice(i + 1);
    writeFileSync(join(w.runDir, "run.json"), mutated);
    expect(failed(await verifyRun(w.runDir))).toEqual(["bundle signature", "artifacts intact"]);
    // change one digit of the duration
    const j = text.indexOf('"durationMs": 60000') + '"durationMs": 6000'.length;
    writeFileSync(join(w.runDir, "run.json"), `${text.slice(0, j)}1${text.slice(j + 1)}`);
    expect(failed(await verifyRun(w.runDir))).toContain("run bundle shape");
    // break the JSON
    writeFileSync(join(w.runDir, "run.json"), `[${text.slice(1)}`);
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toContain("run.json exists");
    expect(v.ok).toBe(false);
  });

  test("a deleted artifact fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    unlinkSync(join(w.runDir, "terminal-transcript.txt"));
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(false);
    expect(v.checks.find((c) => c.name === "artifacts intact")?.message).toContain("terminal-transcript.txt: missing");
  });

  test("a deleted run.json fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    unlinkSync(join(w.runDir, "run.json"));
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(false);
    expect(failed(v)).toContain("run.json exists");
    expect(failed(v)).toContain("no unlisted files");
  });

  test("deeply nested JSON (run.json or a listed artifact) fails closed with checks, never a crash", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const deep = "[".repeat(200_000) + "]".repeat(200_000);
    writeFileSync(join(w.runDir, "run.json"), deep);
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(false);
    expect(v.error).toBeUndefined();
    expect(failed(v)).toContain("run schema");
    // A listed .json artifact with the same nesting (listing updated) is scanned without recursion.
    const { w: w2 } = await writeLiveTerminal(cwd, "live-2");
    plant(w2.runDir, "actor.json", `{"a":${"[".repeat(200_000)}"x"${"]".repeat(200_000)}}`);
    const v2 = await verifyRun(w2.runDir);
    expect(v2.ok).toBe(false);
    expect(failed(v2)).toContain("artifact schemas");
    expect(failed(v2)).not.toContain("public-safety scan");
  });

  test("an added file fails (top level, nested, leftover temp, hidden)", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    for (const rel of ["notes.txt", "screenshots/999.png", ".tmp-abc123", ".hidden"]) {
      mkdirSync(join(w.runDir, rel, ".."), { recursive: true });
      writeFileSync(join(w.runDir, rel), rel.endsWith(".png") ? makePng() : "x");
      const v = await verifyRun(w.runDir);
      expect({ rel, failed: failed(v) }).toEqual({ rel, failed: ["no unlisted files"] });
      unlinkSync(join(w.runDir, rel));
    }
    expect((await verifyRun(w.runDir)).ok).toBe(true);
  });

  test("an unlabeled cost line fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    // A priced line without a rates date or source: not labelled.
    const w2 = createRunWriter({ cwd, runId: "unlabeled", secrets: [], heartbeatMs: 0 });
    const input = JSON.parse(readFileSync(join(w.runDir, "run.json"), "utf8")) as RunBundle;
    await w2.writeArtifact("terminal-transcript.txt", readFileSync(join(w.runDir, "terminal-transcript.txt"), "utf8"), { kind: "terminal-transcript" });
    await w2.writeArtifact("terminal-events.ndjson", readFileSync(join(w.runDir, "terminal-events.ndjson"), "utf8"), { kind: "terminal-events" });
    await w2.writeJson("actor.json", terminalTrace(), { kind: "actor-trace" });
    await w2.writeJson("terminal-ledgers.json", terminalLedgers(input.cleanup, 1), { kind: "terminal-ledgers" });
    await w2.finalize({
      route: input.route,
      mode: input.mode,
      target: input.target,
      createdAt: input.createdAt,
      completedAt: input.completedAt,
      lab: input.lab,
      subject: input.subject,
      participants: input.participants,
      tasks: input.tasks,
      caps: { maxUsd: 1, maxJobs: 1, maxMinutes: 5 },
      cleanup: input.cleanup,
      cost: {
        schema: "humanish.run-cost-summary.v1",
        currency: "usd",
        estimatedTotalUsd: 0.01,
        ratesAsOf: null,
        lines: [{ kind: "model-tokens", usd: 0.01, basis: "rate-table", ratesAsOf: null, source: null, reason: null }],
        note: "",
      },
    });
    const v = await verifyRun(w2.runDir);
    expect(failed(v)).toEqual(["cost labeling"]);
    expect(v.checks.find((c) => c.name === "cost labeling")?.message).toContain("no ratesAsOf");

    // null without a reason, in the terminal ledger
    const led = terminalLedgers(input.cleanup);
    led.cost.lines.media = { ...led.cost.lines.media, reason: null };
    await w.writeJson("terminal-ledgers.json", led, { kind: "terminal-ledgers" });
    await w.finalize();
    const v2 = await verifyRun(w.runDir);
    expect(failed(v2)).toEqual(["cost labeling"]);
    expect(v2.checks.find((c) => c.name === "cost labeling")?.message).toContain("terminal-ledgers cost.media is null without a reason");
  });

  test("a non-PNG screenshot fails even when its listing matches", async () => {
    const cwd = project();
    const w = await writeLiveBrowser(cwd);
    const bogus = new TextEncoder().encode("GIF89a not a png at all, but listed as one");
    writeFileSync(join(w.runDir, "screenshots/002.png"), bogus);
    editBundle(w.runDir, (b) => {
      const a = b.artifacts.find((x: { path: string }) => x.path === "screenshots/002.png");
      a.bytes = bogus.length;
      a.sha256 = createHash("sha256").update(bogus).digest("hex");
    });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["screenshots admitted"]);
    expect(v.checks.find((c) => c.name === "screenshots admitted")?.message).toContain("screenshots/002.png");
  });

  test("a truncated PNG (valid header, listing updated) fails admission", async () => {
    const cwd = project();
    const w = await writeLiveBrowser(cwd);
    const png = readFileSync(join(w.runDir, "screenshots/001.png"));
    const cut = png.subarray(0, png.length - 12); // drop IEND
    writeFileSync(join(w.runDir, "screenshots/001.png"), cut);
    editBundle(w.runDir, (b) => {
      const a = b.artifacts.find((x: { path: string }) => x.path === "screenshots/001.png");
      a.bytes = cut.length;
      a.sha256 = createHash("sha256").update(cut).digest("hex");
    });
    expect(failed(await verifyRun(w.runDir))).toEqual(["screenshots admitted"]);
  });

  test("a planted secret shape fails the public-safety scan and blocks sharing", async () => {
    const cwd = project();
    const w = await writeDryRunTerminal(cwd);
    const key = `sk-proj-${"K".repeat(30)}`;
    const body = `leaked ${key}\n`;
    writeFileSync(join(w.runDir, "notes.log"), body);
    editBundle(w.runDir, (b) => {
      b.artifacts.push({ path: "notes.log", kind: "log", bytes: body.length, sha256: createHash("sha256").update(body).digest("hex") });
    });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["redaction passed", "public-safety scan"]);
    expect(v.shareSafety.status).toBe("blocked");
    expect(v.shareSafety.reasons.map((r) => r.code)).toEqual(["VERIFY_FAILED", "PUBLIC_SAFETY_FINDINGS"]);
    // JSON-escaped local paths are found too
    const esc = JSON.stringify({ p: "\\/home\\/alice\\/x" }).replace(/\\\\/g, "\\");
    writeFileSync(join(w.runDir, "notes.log"), "");
    editBundle(w.runDir, (b) => {
      b.artifacts = b.artifacts.filter((a: { path: string }) => a.path !== "notes.log");
      b.lifecycle.push({ at: b.createdAt, event: "x", message: "ok" });
    });
    unlinkSync(join(w.runDir, "notes.log"));
    writeFileSync(
      join(w.runDir, "run.json"),
      readFileSync(join(w.runDir, "run.json"), "utf8").replace('"message": "ok"', `"message": "at \\u002fhome\\u002falice\\u002fx ${esc.length}"`),
    );
    expect(failed(await verifyRun(w.runDir))).toEqual(["bundle signature", "redaction passed", "public-safety scan"]);
  });

  test("shapes hidden behind HTML character references or percent-encoding are found", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    await w.writeArtifact("report/index.html", "<!doctype html><p>ok</p>", { kind: "report" });
    await w.finalize();
    for (const hidden of [
      "at &#x2F;home&#x2F;alice&#x2F;notes",
      "at %2Fhome%2Falice%2Fnotes",
      "100%zz then %2Ftmp%2Fx and %E0%A4%A",
      "key AKIA&#81;&#81;QQQQQQQQQQQQQQ",
    ]) {
      // planted behind the writer's back (the writer itself would redact these), listing updated
      plant(w.runDir, "report/index.html", `<!doctype html><p>${hidden}</p>`);
      expect({ hidden, failed: failed(await verifyRun(w.runDir)) }).toEqual({ hidden, failed: ["redaction passed", "public-safety scan"] });
    }
    // the writer redacts the percent-encoded forms itself, so its output verifies
    await w.writeArtifact("report/index.html", "<!doctype html><p>at %2Fhome%2Falice%2Fnotes</p>", { kind: "report" });
    await w.finalize();
    expect(failed(await verifyRun(w.runDir))).toEqual([]);
  });

  test("symlinks, hard links and risky segments fail storage containment", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    symlinkSync("/etc/hostname", join(w.runDir, "link"));
    expect(failed(await verifyRun(w.runDir))).toContain("storage containment");
    unlinkSync(join(w.runDir, "link"));
    linkSync(join(w.runDir, "actor.json"), join(cwd, "hardlink.json"));
    expect(failed(await verifyRun(w.runDir))).toEqual(["storage containment"]);
    unlinkSync(join(cwd, "hardlink.json"));
    mkdirSync(join(w.runDir, ".git"));
    expect(failed(await verifyRun(w.runDir))).toEqual(["storage containment"]);
    rmSync(join(w.runDir, ".git"), { recursive: true });
    expect((await verifyRun(w.runDir)).ok).toBe(true);
  });

  test("missing and symlinked run directories", async () => {
    const cwd = project();
    const missing = await verifyRun(join(cwd, ".humanish/runs/nope"));
    expect(missing.ok).toBe(false);
    expect(missing.checks).toEqual([]);
    expect(missing.error?.code).toBe("HUMANISH_RUN_NOT_FOUND");
    expect(missing.shareSafety.status).toBe("blocked");
    const { w } = await writeLiveTerminal(cwd, "real");
    symlinkSync(w.runDir, join(cwd, ".humanish/runs/alias"));
    const linked = await verifyRun(join(cwd, ".humanish/runs/alias"));
    expect(linked.ok).toBe(false);
    expect(linked.checks.map((c) => c.name)).toEqual(["run storage containment"]);
    expect(linked.error?.code).toBe("HUMANISH_INVALID_RUN_BUNDLE");
  });

  test("a run dir renamed to another id fails (runId must name its directory)", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd, "orig");
    renameSync(w.runDir, join(cwd, ".humanish/runs/moved"));
    const v = await verifyRun(join(cwd, ".humanish/runs/moved"));
    expect(failed(v)).toContain("run bundle shape");
  });
});

describe("verifyRun: evidence semantics", () => {
  test("cleanup not proven: retained, unconfirmed, or a receipt without a released proof", async () => {
    for (const outcome of ["retained", "unconfirmed"] as const) {
      const cwd = project();
      const { w, input } = await writeLiveTerminal(cwd);
      const cleanup = (input.cleanup ?? []).map((c) => ({ ...c, outcome }));
      await w.writeJson("terminal-ledgers.json", terminalLedgers(cleanup), { kind: "terminal-ledgers" });
      await w.finalize({ ...input, cleanup });
      const v = await verifyRun(w.runDir);
      expect(failed(v)).toEqual(["cleanup proven"]);
      expect(v.checks.find((c) => c.name === "cleanup proven")?.message).toContain(outcome);
    }
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    await w.appendNdjson("sandbox-receipts.ndjson", { at: new Date().toISOString(), provider: "docker", id: "e".repeat(64) }, { kind: "sandbox-receipts" });
    await w.finalize();
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["cleanup proven"]);
    expect(v.checks.find((c) => c.name === "cleanup proven")?.message).toContain("has a receipt but no released proof");
  });

  test("an unconfirmed release later proven by orphan reconciliation (orphan-release.json) counts", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    const cleanup = (input.cleanup ?? []).map((c) => ({ ...c, outcome: "unconfirmed" as const, reason: "remove timed out" }));
    await w.writeJson("terminal-ledgers.json", terminalLedgers(cleanup), { kind: "terminal-ledgers" });
    await w.finalize({ ...input, cleanup });
    expect(failed(await verifyRun(w.runDir))).toEqual(["cleanup proven"]);
    // recorded the way orphan reconciliation records it (redacted, atomic, schema-checked)
    const rel = recordOrphanRelease(cwd, "live-1", {
      ...cleanup[0]!,
      outcome: "released",
      reason: `inspect-404 after io dir ${cwd}/x and /tmp/humanish-gd-1`,
      at: new Date().toISOString(),
    });
    expect(rel).toBe(".humanish/runs/live-1/orphan-release.json");
    expect(readFileSync(join(w.runDir, "orphan-release.json"), "utf8")).toContain("[target-cwd]/x and [REDACTED_LOCAL_PATH]");
    expect(recordOrphanRelease(cwd, "not-here", cleanup[0]!)).toBeNull();
    const orphan = JSON.parse(readFileSync(join(w.runDir, "orphan-release.json"), "utf8"));
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual([]);
    expect(v.checks.find((c) => c.name === "cleanup proven")?.message).toContain("orphan reconciliation");
    // malformed or unsafe records fail, even when signed as appendices by the bundle's own key
    const resign = (doc: unknown) => writeSignedAppendix(w.runDir, w.runId, "orphan-release.json", new TextEncoder().encode(JSON.stringify(doc)));
    resign({ ...orphan, runId: "other" });
    expect(failed(await verifyRun(w.runDir))).toEqual(["artifact schemas", "cleanup proven"]);
    resign({ ...orphan, releases: [{ ...orphan.releases[0], reason: "io dir /home/alice/x" }] });
    expect(failed(await verifyRun(w.runDir))).toEqual(["redaction passed", "public-safety scan"]);
    // a hand edit of the signed appendix, or the appendix without its signature, is refused
    writeFileSync(join(w.runDir, "orphan-release.json"), JSON.stringify(orphan));
    expect(failed(await verifyRun(w.runDir))).toEqual(["no unlisted files", "cleanup proven"]);
    unlinkSync(join(w.runDir, "orphan-release.json.sig.json"));
    expect(failed(await verifyRun(w.runDir))).toEqual(["no unlisted files", "cleanup proven"]);
  });

  test("terminal evidence: a lying no-spend proof fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const b = readBundle(w.runDir);
    const led = terminalLedgers(b.cleanup);
    // claims media is a known zero while the ledger marks it unmeasured
    led.noSpendProof = { ...buildNoSpendProof(led.cost, 0), knownZeroLines: ["product", "payment", "media"], unmeasuredLines: ["provider"] };
    await w.writeJson("terminal-ledgers.json", led, { kind: "terminal-ledgers" });
    await w.finalize();
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["terminal-product evidence"]);
    expect(v.checks.find((c) => c.name === "terminal-product evidence")?.message).toContain("media as known zero");
  });

  test("caps: known spend over maxUsd fails", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    await w.finalize({
      ...input,
      cost: {
        schema: "humanish.run-cost-summary.v1",
        currency: "usd",
        estimatedTotalUsd: 0.5,
        ratesAsOf: "2026-11-01",
        lines: [{ kind: "model-tokens", usd: 0.5, basis: "rate-table", ratesAsOf: "2026-11-01", source: "https://openai.com/api/pricing", reason: null }],
        note: "",
      },
    });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["caps respected"]);
  });

  test("cost: a total of 0 beside an unmeasured line fails (unknown is never 0), and the known lines still count against maxUsd", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    const zero = {
      kind: "model-tokens" as const,
      usd: 0,
      basis: "rate-table" as const,
      ratesAsOf: "2026-11-01",
      source: "https://openai.com/api/pricing",
      reason: null,
    };
    const unknown = { kind: "sandbox-minutes" as const, usd: null, basis: "unmeasured" as const, ratesAsOf: null, source: null, reason: "kill_unconfirmed" };
    const cost = (total: number | null, lines: object[]) =>
      ({ schema: "humanish.run-cost-summary.v1", currency: "usd", estimatedTotalUsd: total, ratesAsOf: "2026-11-01", lines, note: "" }) as never;
    await w.finalize({ ...input, cost: cost(0, [zero, unknown]) });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["cost labeling"]);
    expect(v.checks.find((c) => c.name === "cost labeling")?.message).toContain("a line is unmeasured");
    await w.finalize({ ...input, cost: cost(null, [{ ...zero, usd: 0.5 }, unknown]) });
    expect(failed(await verifyRun(w.runDir))).toEqual(["caps respected"]);
  });

  test("caps: maxJobs counts billable (model-backed) participants, not scripted ones", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    await w.finalize({ ...input, caps: { maxUsd: 0, maxJobs: 0, maxMinutes: 5 } });
    expect(failed(await verifyRun(w.runDir))).toEqual([]);
    const codex = (input.participants ?? []).map((p) => ({ ...p, actorType: "codex-exec" }));
    await w.finalize({ ...input, participants: codex, caps: { maxUsd: 0, maxJobs: 0, maxMinutes: 5 } });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toContain("caps respected");
    expect(v.checks.find((c) => c.name === "caps respected")?.message).toContain("exceed maxJobs 0");
  });

  test("caps: a participant running past maxMinutes fails", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    const parts = (input.participants ?? []).map((p) => ({ ...p, durationMs: 10 * 60_000 }));
    await w.finalize({ ...input, participants: parts });
    expect(failed(await verifyRun(w.runDir))).toEqual(["caps respected"]);
  });

  test("actor engagement: goal_satisfied with zero actions and messages fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    await w.writeJson("actor.json", terminalTrace({ items: [], counts: {} }), { kind: "actor-trace" });
    await w.finalize();
    expect(failed(await verifyRun(w.runDir))).toEqual(["actor engagement"]);
  });

  test("verdict consistency: a hand-edited pass over a failed participant fails", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    editBundle(w.runDir, (b) => {
      b.participants[0].status = "abandoned";
      b.review.participants = { ...b.review.participants, reachedGoal: 0, abandoned: 1 };
    });
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(false);
    expect(failed(v)).toContain("verdict consistency");
  });

  test("browser evidence: a pass without a screenshot, or without geometry, fails", async () => {
    const cwd = project();
    const w = await writeLiveBrowser(cwd);
    editBundle(w.runDir, (b) => {
      delete b.participants[0].desktopGeometry;
    });
    const v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["browser evidence"]);
    expect(v.checks.find((c) => c.name === "browser evidence")?.message).toContain("no desktop geometry");
  });

  test("lab.source.ref: an absolute lab path is persisted project-relative or as [external]/<name>", async () => {
    const cwd = project();
    const w = createRunWriter({ cwd, runId: "labref", secrets: [], heartbeatMs: 0 });
    const base = {
      route: "terminal" as const,
      mode: "dry-run" as const,
      target: "docker" as const,
      createdAt: new Date(Date.now() - 5).toISOString(),
      subject: { source: "terminal-product" as const, name: "jq", provenance: "unpinned" as const },
    };
    let b = await w.finalize({ ...base, lab: { id: "x", source: { ref: join(cwd, "humanish/labs/x.yaml"), sha256: "c".repeat(64) } } });
    expect(b.lab.source.ref).toBe("humanish/labs/x.yaml");
    b = await w.finalize({ ...base, lab: { id: "x", source: { ref: "/opt/elsewhere/x.yaml", sha256: "c".repeat(64) } } });
    expect(b.lab.source.ref).toBe("[external]/x.yaml");
    expect((await verifyRun(w.runDir)).ok).toBe(true);
    editBundle(w.runDir, (x) => {
      x.lab.source.ref = "/opt/elsewhere/x.yaml";
    });
    expect(failed(await verifyRun(w.runDir))).toEqual(["run bundle shape"]);
  });

  test("dry run claiming resources fails", async () => {
    const cwd = project();
    const w = await writeDryRunTerminal(cwd);
    editBundle(w.runDir, (b) => {
      b.cleanup = [{ id: "x".repeat(12), provider: "docker", outcome: "released", reason: "inspect-404", at: b.createdAt }];
    });
    expect(failed(await verifyRun(w.runDir))).toEqual(["cleanup proven"]);
  });

  test("review tallies must match the participants", async () => {
    const cwd = project();
    const w = await writeDryRunTerminal(cwd);
    editBundle(w.runDir, (b) => {
      b.review.participants.total = 3;
    });
    expect(failed(await verifyRun(w.runDir))).toEqual(["run bundle shape"]);
  });
});
