/**
 * Tamper-evident bundles: every edit made without the signing key fails verify, re-digested
 * edits included; a valid signature by a key outside the trust set is intact but only
 * `local_only`; late files count only as signed appendices by the bundle's own signer.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  defaultTrust,
  fingerprintOf,
  loadSigningKey,
  parseTrust,
  recordOrphanRelease,
  SIGNATURE_FILE,
  type VerifyResult,
  verifyFiles,
  verifyRun,
} from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { projectPerTest, terminalLedgers, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";
import { loadFiles, resign, testKey } from "./memory.ts";

const project = projectPerTest();

function failed(v: VerifyResult): string[] {
  return v.checks.filter((c) => !c.ok).map((c) => c.name);
}
function sigMessage(v: VerifyResult): string {
  return v.checks.find((c) => c.name === "bundle signature")?.message ?? "";
}
/** Rewrite a listed artifact and fix its size and digest in run.json — everything but the signature. */
function plantWithDigest(dir: string, rel: string, content: string): void {
  writeFileSync(join(dir, rel), content);
  const bytes = readFileSync(join(dir, rel));
  const b = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
  const a = b.artifacts.find((x: { path: string }) => x.path === rel);
  a.bytes = bytes.length;
  a.sha256 = createHash("sha256").update(bytes).digest("hex");
  writeFileSync(join(dir, "run.json"), `${JSON.stringify(b, null, 2)}\n`);
}
function editRunJson(dir: string, fn: (b: Record<string, any>) => void): void {
  const b = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
  fn(b);
  writeFileSync(join(dir, "run.json"), `${JSON.stringify(b, null, 2)}\n`);
}
function expectTamperFails(v: VerifyResult): void {
  expect(v.ok).toBe(false);
  expect(failed(v)).toContain("bundle signature");
  expect(v.shareSafety.status).toBe("blocked");
}

describe("signed at seal", () => {
  test("a fresh bundle is signed by the local key and share_ready; signature.json holds no private key", async () => {
    const { w } = await writeLiveTerminal(project());
    const v = await verifyRun(w.runDir);
    expect(v.ok).toBe(true);
    expect(v.shareSafety.status).toBe("share_ready");
    const own = loadSigningKey()!;
    expect(v.signer).toEqual({ fingerprint: own.fingerprint, publicKey: own.publicKey, trusted: true });
    expect(sigMessage(v)).toBe(`signed by trusted key ${own.fingerprint}`);
    const sig = JSON.parse(readFileSync(join(w.runDir, SIGNATURE_FILE), "utf8"));
    expect(Object.keys(sig).sort()).toEqual(["algorithm", "manifestSha256", "publicKey", "schema", "signature"]);
    expect(sig).toMatchObject({ schema: "humanish.bundle-signature.v1", algorithm: "ed25519", publicKey: own.publicKey });
    expect(readFileSync(join(w.runDir, SIGNATURE_FILE), "utf8")).not.toContain("PRIVATE");
  });

  test("the key file is created once, mode 0600, in the config dir outside the project", async () => {
    const dir = process.env.HUMANISH_CONFIG_DIR!;
    expect(dir).toBeTruthy();
    const cwd = project();
    await writeLiveTerminal(cwd);
    const st = statSync(join(dir, "signing-key.pem"));
    expect(st.mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);
    expect(dir.startsWith(cwd)).toBe(false);
    expect(loadSigningKey()!.publicKey).toBe(loadSigningKey()!.publicKey);
  });
});

describe("every tamper without the key fails", () => {
  test("edit the transcript and fix its digest", async () => {
    const { w } = await writeLiveTerminal(project());
    plantWithDigest(w.runDir, "terminal-transcript.txt", "$ jq --help\nall good, nothing to see\n");
    const v = await verifyRun(w.runDir);
    expectTamperFails(v);
    expect(failed(v)).toEqual(["bundle signature"]);
    expect(sigMessage(v)).toContain("manifest digest mismatch");
  });

  test("edit the report and fix its digest", async () => {
    const w = await writeLiveBrowser(project());
    plantWithDigest(w.runDir, "report/index.html", "<!doctype html><title>r</title><p>5/5 reached the goal</p>");
    expectTamperFails(await verifyRun(w.runDir));
  });

  test("edit run.json free text: title, goal, reason, lifecycle message", async () => {
    const { w } = await writeLiveTerminal(project());
    const original = readFileSync(join(w.runDir, "run.json"));
    const edits: ((b: Record<string, any>) => void)[] = [
      (b) => (b.lab.title = "A much better lab"),
      (b) => (b.tasks[1].goal = "something easy"),
      (b) => (b.participants[0].reason = "it was the product's fault"),
      (b) => (b.lifecycle[0].message = "nothing happened"),
      (b) => (b.cleanup[0].reason = "trust me"),
    ];
    for (const edit of edits) {
      writeFileSync(join(w.runDir, "run.json"), original);
      editRunJson(w.runDir, edit);
      const v = await verifyRun(w.runDir);
      expectTamperFails(v);
      expect(failed(v)).toEqual(["bundle signature"]);
    }
    writeFileSync(join(w.runDir, "run.json"), original);
    expect((await verifyRun(w.runDir)).ok).toBe(true);
  });

  test("shift every timestamp by the same amount (internally consistent)", async () => {
    const { w } = await writeLiveTerminal(project());
    const shift = (s: string) => s.replace(/2026-11-30T02:/g, "2026-11-29T02:");
    for (const rel of ["run.json", "status.json", "actor.json", "terminal-ledgers.json", "terminal-events.ndjson", "sandbox-receipts.ndjson"]) {
      writeFileSync(join(w.runDir, rel), shift(readFileSync(join(w.runDir, rel), "utf8")));
    }
    // fix every digest so only the signature can tell
    const b = JSON.parse(readFileSync(join(w.runDir, "run.json"), "utf8"));
    for (const a of b.artifacts) {
      const bytes = readFileSync(join(w.runDir, a.path));
      a.bytes = bytes.length;
      a.sha256 = createHash("sha256").update(bytes).digest("hex");
    }
    writeFileSync(join(w.runDir, "run.json"), `${JSON.stringify(b, null, 2)}\n`);
    const v = await verifyRun(w.runDir);
    expectTamperFails(v);
    expect(failed(v)).toEqual(["bundle signature"]);
  });

  test("a hand-written orphan-release.json does not turn an unconfirmed cleanup ok", async () => {
    const cwd = project();
    const { w, input } = await writeLiveTerminal(cwd);
    const cleanup = (input.cleanup ?? []).map((c) => ({ ...c, outcome: "unconfirmed" as const, reason: "remove timed out" }));
    await w.writeJson("terminal-ledgers.json", terminalLedgers(cleanup), { kind: "terminal-ledgers" });
    await w.finalize({ ...input, cleanup });
    expect(failed(await verifyRun(w.runDir))).toEqual(["cleanup proven"]);
    const forged = { schema: "humanish.orphan-release.v1", runId: w.runId, releases: [{ ...cleanup[0]!, outcome: "released", reason: "gone" }] };
    writeFileSync(join(w.runDir, "orphan-release.json"), `${JSON.stringify(forged)}\n`);
    let v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["no unlisted files", "cleanup proven"]);
    expect(v.checks.find((c) => c.name === "no unlisted files")?.message).toContain("not a signed appendix (no appendix signature)");
    // an appendix signature made with another key is refused too
    const other = testKey();
    const { signAppendix, encodeSigned } = await import("../../src/bundle/signing/manifest.ts");
    const manifestSha256 = JSON.parse(readFileSync(join(w.runDir, SIGNATURE_FILE), "utf8")).manifestSha256;
    const bytes = readFileSync(join(w.runDir, "orphan-release.json"));
    const doc = signAppendix(other.privateKey, other.publicKey, { runId: w.runId, path: "orphan-release.json", bytes, extendsSha256: manifestSha256 });
    writeFileSync(join(w.runDir, "orphan-release.json.sig.json"), encodeSigned(doc));
    v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual(["no unlisted files", "cleanup proven"]);
    expect(v.checks.find((c) => c.name === "no unlisted files")?.message).toContain("not the bundle's signer");
    // the real sweep writes a signed appendix: the cleanup is re-judged from it
    unlinkSync(join(w.runDir, "orphan-release.json"));
    unlinkSync(join(w.runDir, "orphan-release.json.sig.json"));
    expect(
      recordOrphanRelease(cwd, w.runId, { ...cleanup[0]!, outcome: "released", reason: "orphan (controller gone): inspect-404", at: new Date().toISOString() }),
    ).toBe(`.humanish/runs/${w.runId}/orphan-release.json`);
    v = await verifyRun(w.runDir);
    expect(failed(v)).toEqual([]);
    expect(v.checks.find((c) => c.name === "cleanup proven")?.message).toContain("signed appendix");
    // a later re-seal (e.g. `humanish report`) carries the appendix over
    await w.writeArtifact("report/index.html", "<!doctype html><title>r</title>", { kind: "report" });
    await w.finalize();
    expect(failed(await verifyRun(w.runDir))).toEqual([]);
  });

  test("remove signature.json", async () => {
    const { w } = await writeLiveTerminal(project());
    unlinkSync(join(w.runDir, SIGNATURE_FILE));
    const v = await verifyRun(w.runDir);
    expectTamperFails(v);
    expect(sigMessage(v)).toContain("unsigned: signature.json is missing");
    expect(v.signer).toBeNull();
  });

  test("replace the signature with one from another key's bundle", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd, "mine");
    const { w: theirs } = await writeLiveTerminal(cwd, "theirs");
    // "theirs" is re-signed by another key, then its signature is copied over "mine"
    const other = testKey();
    const files = resign(await loadFiles(theirs.runDir), "theirs", other);
    writeFileSync(join(theirs.runDir, SIGNATURE_FILE), files.find((f) => f.path === SIGNATURE_FILE)!.bytes);
    copyFileSync(join(theirs.runDir, SIGNATURE_FILE), join(w.runDir, SIGNATURE_FILE));
    const v = await verifyRun(w.runDir);
    expectTamperFails(v);
    expect(sigMessage(v)).toContain(`claims signer ${fingerprintOf(other.publicKey)}`);
  });

  test("an edit re-signed with another key is never share_ready: the signer is unknown", async () => {
    const { w } = await writeLiveTerminal(project());
    const other = testKey();
    const files = (await loadFiles(w.runDir)).map((f) =>
      f.path === "run.json" ? { ...f, bytes: new TextEncoder().encode(new TextDecoder().decode(f.bytes).replace('"reason": "ok"', '"reason": "fine"')) } : f,
    );
    const signed = resign(files, w.runId, other);
    const v = await verifyFiles({ run: w.runId, files: signed, trust: defaultTrust() });
    expect(v.ok).toBe(true);
    expect(v.shareSafety.status).toBe("local_only");
    expect(v.shareSafety.reasons.map((r) => r.code)).toEqual(["UNTRUSTED_SIGNER"]);
    expect(v.signer).toEqual({ fingerprint: fingerprintOf(other.publicKey)!, publicKey: other.publicKey, trusted: false });
    expect(sigMessage(v)).toContain("not a trusted key (unknown signer)");
    expect(v.warnings.join(" ")).toContain(`--trust ${fingerprintOf(other.publicKey)}`);
  });
});

describe("trust", () => {
  test("someone else's bundle: local_only until its key is trusted by key, fingerprint or file", async () => {
    const cwd = project();
    const { w } = await writeLiveTerminal(cwd);
    const other = testKey();
    const files = resign(await loadFiles(w.runDir), w.runId, other);
    const fp = fingerprintOf(other.publicKey)!;
    writeFileSync(join(cwd, "their-key.txt"), `${other.publicKey}\n`);
    writeFileSync(join(cwd, "their-keys.json"), JSON.stringify({ schema: "humanish.keys-result.v1", publicKey: other.publicKey }));
    const read = (p: string) => {
      try {
        return new Uint8Array(readFileSync(join(cwd, p)));
      } catch {
        return null;
      }
    };
    expect((await verifyFiles({ run: w.runId, files, trust: defaultTrust() })).shareSafety.status).toBe("local_only");
    for (const spec of [other.publicKey, fp, "their-key.txt", "their-keys.json", `ed25519:${"0".repeat(32)},${fp}`]) {
      const v = await verifyFiles({ run: w.runId, files, trust: defaultTrust(process.env, parseTrust([spec], read)) });
      expect({ spec, status: v.shareSafety.status }).toEqual({ spec, status: "share_ready" });
    }
    let err: unknown;
    try {
      parseTrust(["not-a-key"], read);
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_TRUST_INVALID")).toBe(true);
  });
});

describe("the signing key", () => {
  test("HUMANISH_SIGNING_KEY supplies a PKCS#8 PEM; a bad value fails with a code and is never echoed", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    const k = loadSigningKey({ HUMANISH_SIGNING_KEY: pem })!;
    expect(k.source).toBe("env");
    expect(loadSigningKey({ HUMANISH_SIGNING_KEY: pem.replace(/\n/g, "\\n") })!.publicKey).toBe(k.publicKey);
    const bad = "-----BEGIN PRIVATE KEY-----\nnot-really-a-key-0123456789\n-----END PRIVATE KEY-----";
    let err: unknown;
    try {
      loadSigningKey({ HUMANISH_SIGNING_KEY: bad });
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_SIGNING_KEY_INVALID")).toBe(true);
    expect(JSON.stringify((err as Error).message)).not.toContain("not-really-a-key");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    expect(() => loadSigningKey({ HUMANISH_SIGNING_KEY: rsa })).toThrow("expected ed25519");
  });

  test("a key file readable by others is refused; XDG_CONFIG_HOME and HOME place it", async () => {
    const base = project();
    const k = loadSigningKey({ XDG_CONFIG_HOME: base })!;
    expect(k.created).toBe(true);
    const file = join(base, "humanish", "signing-key.pem");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadSigningKey({ XDG_CONFIG_HOME: base })!.publicKey).toBe(k.publicKey);
    const { chmodSync } = await import("node:fs");
    chmodSync(file, 0o644);
    expect(() => loadSigningKey({ XDG_CONFIG_HOME: base })).toThrow("readable by you only");
    const home = project();
    expect(loadSigningKey({ HOME: home })!.created).toBe(true);
    expect(statSync(join(home, ".config", "humanish", "signing-key.pem")).isFile()).toBe(true);
    expect(loadSigningKey({ HOME: home }, { create: false })!.created).toBe(false);
    expect(loadSigningKey({ HOME: project() }, { create: false })).toBeNull();
  });

  test("HUMANISH_SIGNING_KEY must be exactly one PEM key: junk after it, a second key, or 120 KB are refused, never echoed", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const pem = () => generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    const one = pem();
    // Surrounding whitespace, as a secret store may add, is fine.
    expect(loadSigningKey({ HUMANISH_SIGNING_KEY: `\n${one}\n\n` })!.source).toBe("env");
    const junk = `${one}${"junk-canary-".repeat(10_000)}`;
    const cases: [string, string, string][] = [
      ["a second key after the first", `${one}${pem()}`, "exactly one PEM private key"],
      ["text after the key", `${one}tail-canary\n`, "exactly one PEM private key"],
      ["text before the key", `head-canary\n${one}`, "exactly one PEM private key"],
      ["120 KB of junk after the key", junk, "at most 4096 accepted"],
    ];
    for (const [what, value, message] of cases) {
      let err: unknown;
      try {
        loadSigningKey({ HUMANISH_SIGNING_KEY: value });
      } catch (e) {
        err = e;
      }
      expect({ what, code: (err as { code?: string })?.code }).toEqual({ what, code: "HUMANISH_SIGNING_KEY_INVALID" });
      expect((err as Error).message).toContain(message);
      expect((err as Error).message).not.toMatch(/canary|BEGIN/);
    }
  });

  test("a config dir others can write, or a key file with a second key, is refused with the path and a chmod", async () => {
    const { chmodSync, mkdirSync } = await import("node:fs");
    const base = project();
    const dir = join(base, "cfg");
    mkdirSync(dir, { mode: 0o700 });
    expect(loadSigningKey({ HUMANISH_CONFIG_DIR: dir })!.created).toBe(true);
    for (const mode of [0o777, 0o775, 0o757]) {
      chmodSync(dir, mode);
      let err: unknown;
      try {
        loadSigningKey({ HUMANISH_CONFIG_DIR: dir });
      } catch (e) {
        err = e;
      }
      expect(isHumanishError(err, "HUMANISH_SIGNING_KEY_INSECURE")).toBe(true);
      expect((err as Error).message).toContain(dir);
      expect((err as { next?: string }).next).toBe(`chmod 700 ${dir} (then check that signing-key.pem in it is still yours: humanish keys)`);
    }
    // Readable by others but not writable (0755) is fine for the directory, as for ~/.ssh.
    chmodSync(dir, 0o755);
    expect(loadSigningKey({ HUMANISH_CONFIG_DIR: dir })!.source).toBe("file");
    // The trust set of a refused key is empty: verify then says the signer is untrusted.
    chmodSync(dir, 0o777);
    expect(defaultTrust({ HUMANISH_CONFIG_DIR: dir }).publicKeys.size).toBe(0);
    chmodSync(dir, 0o700);
    const file = join(dir, "signing-key.pem");
    const { generateKeyPairSync } = await import("node:crypto");
    writeFileSync(file, `${readFileSync(file, "utf8")}${generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" })}`);
    expect(() => loadSigningKey({ HUMANISH_CONFIG_DIR: dir })).toThrow("exactly one PEM private key");
  });

  test("no key is ever created in a config dir others can write; lab run refuses such a key before anything runs", async () => {
    const { chmodSync, existsSync, mkdirSync } = await import("node:fs");
    const { cli } = await import("../cli/support.ts");
    const base = project();
    const dir = join(base, "open-cfg");
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    expect(() => loadSigningKey({ HUMANISH_CONFIG_DIR: dir })).toThrow(expect.objectContaining({ code: "HUMANISH_SIGNING_KEY_INSECURE" }));
    expect(existsSync(join(dir, "signing-key.pem"))).toBe(false);
    // The study is refused at its start: no run directory, so no sandbox and no spend either.
    const env = { ...process.env, HUMANISH_CONFIG_DIR: dir, HUMANISH_SIGNING_KEY: "" };
    const r = await cli(["lab", "run", "default", "--dry-run", "--json", "--run-id", "insecure-key", "--cwd", base], env);
    expect(r.code).toBe(2);
    expect(r.json<{ ok: boolean; error: { code: string } }>()).toMatchObject({ ok: false, error: { code: "HUMANISH_SIGNING_KEY_INSECURE" } });
    expect(existsSync(join(base, ".humanish", "runs", "insecure-key"))).toBe(false);
    const junk = await cli(["lab", "run", "default", "--dry-run", "--json", "--run-id", "junk-key", "--cwd", base], {
      ...process.env,
      HUMANISH_SIGNING_KEY: "zzqq-not-a-key",
    });
    expect(junk.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_SIGNING_KEY_INVALID");
    expect(existsSync(join(base, ".humanish", "runs", "junk-key"))).toBe(false);
  });

  test("a --trust PEM public key with a second key or text after it is refused", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const pub = () => generateKeyPairSync("ed25519").publicKey.export({ format: "pem", type: "spki" }) as string;
    const one = pub();
    expect(parseTrust([one], () => null).publicKeys.size).toBe(1);
    for (const bad of [`${one}${pub()}`, `${one}junk`]) {
      expect(() => parseTrust([bad], () => null)).toThrow("is not a public key");
    }
  });
});
