/**
 * `humanish report` adds a report by re-sealing the bundle, so it must never re-sign a bundle
 * that does not verify: otherwise the fresh signature would launder an edit (a tampered,
 * unsigned or foreign-signed bundle would come out `share_ready`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { writeReport } from "../../src/report/write.ts";
import { tempProject, writeTerminalRun } from "./fixtures.ts";

const projects: { cleanup: () => void }[] = [];
afterAll(() => {
  for (const p of projects) p.cleanup();
});

async function sealedRun(): Promise<string> {
  const p = tempProject();
  projects.push(p);
  return writeTerminalRun(p.cwd);
}

async function refusal(runDir: string): Promise<string> {
  try {
    await writeReport(runDir);
  } catch (e) {
    if (isHumanishError(e)) return e.code;
    throw e;
  }
  return "accepted";
}

/** Rewrites run.json's listing so `path` carries the digest and size of its current bytes. */
function redigest(runDir: string, path: string): void {
  const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
  const bytes = readFileSync(join(runDir, path));
  const entry = run.artifacts.find((a: { path: string }) => a.path === path);
  entry.bytes = bytes.byteLength;
  entry.sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  writeFileSync(join(runDir, "run.json"), JSON.stringify(run, null, 2));
}

describe("report never re-signs a bundle that does not match its seal", () => {
  test("an intact bundle of this user's takes a report and still verifies", async () => {
    const runDir = await sealedRun();
    expect(await refusal(runDir)).toBe("accepted");
    expect((await verifyRun(runDir)).ok).toBe(true);
  });

  test("an edited transcript, with and without its digest fixed in run.json, is refused and stays failing", async () => {
    for (const fix of [false, true]) {
      const runDir = await sealedRun();
      const path = "terminal-transcript.txt";
      writeFileSync(join(runDir, path), `${readFileSync(join(runDir, path), "utf8")}FORGED\n`);
      if (fix) redigest(runDir, path);
      expect({ fix, code: await refusal(runDir) }).toEqual({ fix, code: "HUMANISH_BUNDLE_NOT_RESEALABLE" });
      expect({ fix, ok: (await verifyRun(runDir)).ok }).toEqual({ fix, ok: false });
    }
  });

  test("an edited free-text field of run.json is refused", async () => {
    const runDir = await sealedRun();
    const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
    run.lab.title = "a title nobody sealed";
    writeFileSync(join(runDir, "run.json"), JSON.stringify(run, null, 2));
    expect(await refusal(runDir)).toBe("HUMANISH_BUNDLE_NOT_RESEALABLE");
    expect((await verifyRun(runDir)).ok).toBe(false);
  });

  test("a bundle whose signature.json was removed is refused (no fresh seal for an unsigned bundle)", async () => {
    const runDir = await sealedRun();
    rmSync(join(runDir, "signature.json"));
    expect(await refusal(runDir)).toBe("HUMANISH_BUNDLE_NOT_RESEALABLE");
    expect((await verifyRun(runDir)).ok).toBe(false);
  });

  test("a bundle sealed by another key is refused, and keeps its own signer", async () => {
    const runDir = await sealedRun();
    const before = readFileSync(join(runDir, "signature.json"), "utf8");
    const other = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const saved = process.env.HUMANISH_SIGNING_KEY;
    process.env.HUMANISH_SIGNING_KEY = other;
    try {
      expect(await refusal(runDir)).toBe("HUMANISH_BUNDLE_NOT_RESEALABLE");
    } finally {
      if (saved === undefined) delete process.env.HUMANISH_SIGNING_KEY;
      else process.env.HUMANISH_SIGNING_KEY = saved;
    }
    expect(readFileSync(join(runDir, "signature.json"), "utf8")).toBe(before);
  });
});
