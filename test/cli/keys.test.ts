/** `humanish keys` and `humanish verify --trust` through the CLI. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "./support.ts";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "humanish-keys-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("keys", () => {
  test("creates the key pair on first use in the config dir, prints only the public half", async () => {
    const config = join(tmp(), "cfg");
    const env = { ...process.env, HUMANISH_CONFIG_DIR: config, HUMANISH_SIGNING_KEY: undefined };
    const first = await cli(["keys", "--json"], env);
    expect(first.code).toBe(0);
    const doc = first.json<{ schema: string; ok: boolean; publicKey: string; fingerprint: string; created: boolean; source: string; algorithm: string }>();
    expect(doc).toMatchObject({ schema: "humanish.keys-result.v1", ok: true, algorithm: "ed25519", source: "file", created: true });
    expect(doc.publicKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(doc.fingerprint).toMatch(/^ed25519:[0-9a-f]{32}$/);
    const pem = readFileSync(join(config, "signing-key.pem"), "utf8");
    expect(statSync(join(config, "signing-key.pem")).mode & 0o777).toBe(0o600);
    const body = pem.split("\n")[1]!;
    expect(first.stdout).not.toContain(body);
    expect(first.stdout).not.toContain("PRIVATE");
    const again = await cli(["keys"], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(doc.fingerprint);
    expect(again.stdout).not.toContain("created just now");
    expect(again.stdout).not.toContain(body);
  });

  test("a malformed HUMANISH_SIGNING_KEY is a coded failure that never echoes the value", async () => {
    const value = "-----BEGIN PRIVATE KEY-----\nZZZZ-not-a-key-4242\n-----END PRIVATE KEY-----";
    const r = await cli(["keys", "--json"], { ...process.env, HUMANISH_SIGNING_KEY: value });
    expect(r.code).toBe(2);
    expect(r.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_SIGNING_KEY_INVALID");
    expect(r.stdout + r.stderr).not.toContain("ZZZZ-not-a-key-4242");
  });
});

describe("verify --trust", () => {
  test("a bundle signed on another machine is local_only until its signer is trusted", async () => {
    const cwd = tmp();
    const theirs = { ...process.env, HUMANISH_CONFIG_DIR: join(tmp(), "their-config"), HUMANISH_SIGNING_KEY: undefined };
    const mine = { ...process.env, HUMANISH_CONFIG_DIR: join(tmp(), "my-config"), HUMANISH_SIGNING_KEY: undefined };
    // The study runs as its own process, as on the other machine: its writer signs with that env's key.
    const run = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, "..", "..", "src", "cli", "main.ts"),
        "lab",
        "run",
        "default",
        "--dry-run",
        "--cwd",
        cwd,
        "--run-id",
        "theirs-1",
        "--json",
      ],
      {
        env: theirs,
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(await run.exited).toBe(0);
    const them = (await cli(["keys", "--json"], theirs)).json<{ publicKey: string; fingerprint: string }>();
    const signer = await cli(["verify", "--run", "theirs-1", "--cwd", cwd, "--json"], theirs);
    expect(signer.json<{ shareSafety: { status: string } }>().shareSafety.status).toBe("share_ready");
    const untrusted = await cli(["verify", "--run", "theirs-1", "--cwd", cwd, "--json"], mine);
    expect(untrusted.code).toBe(0);
    const u = untrusted.json<{
      ok: boolean;
      shareSafety: { status: string; reasons: { code: string }[] };
      signer: { trusted: boolean; fingerprint: string };
    }>();
    expect(u.ok).toBe(true);
    expect(u.shareSafety.status).toBe("local_only");
    expect(u.shareSafety.reasons.map((x) => x.code)).toContain("UNTRUSTED_SIGNER");
    expect(u.signer).toMatchObject({ trusted: false, fingerprint: them.fingerprint });
    writeFileSync(join(cwd, "their.pub"), `${them.publicKey}\n`);
    for (const spec of [them.fingerprint, them.publicKey, join(cwd, "their.pub"), `ed25519:${"1".repeat(32)},${them.fingerprint}`]) {
      const v = await cli(["verify", "--run", "theirs-1", "--cwd", cwd, "--trust", spec, "--json"], mine);
      expect({ spec, status: v.json<{ shareSafety: { status: string } }>().shareSafety.status }).toEqual({ spec, status: "share_ready" });
    }
    const bad = await cli(["verify", "--run", "theirs-1", "--cwd", cwd, "--trust", "nonsense", "--json"], mine);
    expect(bad.code).toBe(2);
    expect(bad.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_TRUST_INVALID");
  }, 60_000);
});
