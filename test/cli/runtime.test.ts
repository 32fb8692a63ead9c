import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireDocker } from "../support/prereq.ts";
import { cli } from "./support.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "humanish-cli-rt-"));

describe("runtime and doctor (real engine)", () => {
  test("runtime status reports the engine and both images, read-only", async () => {
    await requireDocker();
    const r = await cli(["runtime", "status", "--json"]);
    const j = r.json<{ schema: string; engine: { reachable: boolean; apiVersion: string }; images: Record<string, { ref: string } | null> }>();
    expect(j.schema).toBe("humanish.runtime-result.v1");
    expect(j.engine.reachable).toBe(true);
    expect(j.images.sandbox?.ref).toStartWith("humanish-sandbox:");
    expect(j.images.guest?.ref).toStartWith("humanish-guest:");
  });
  test("an unreachable engine is a clear error with a next step", async () => {
    const r = await cli(["runtime", "status", "--json"], { ...process.env, DOCKER_HOST: "unix:///nonexistent/docker.sock" });
    expect(r.code).toBe(2);
    const j = r.json<{ ok: boolean; error: { code: string; message: string; next: string } }>();
    expect(j.ok).toBe(false);
    expect(j.error.code).toBe("HUMANISH_DOCKER_UNAVAILABLE");
    expect(j.error.next).toContain("dockerd");
  });
  test("setup --from-archive with a wrong byte count or digest loads nothing", async () => {
    await requireDocker();
    const dir = tmp();
    const file = join(dir, "image.tar");
    writeFileSync(file, "not really an image archive");
    const sha = new Bun.CryptoHasher("sha256").update("not really an image archive").digest("hex");
    const wrongBytes = await cli(["runtime", "setup", "--from-archive", file, "--sha256", sha, "--bytes", "5", "--json"]);
    expect(wrongBytes.code).toBe(2);
    expect(wrongBytes.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    const wrongDigest = await cli(["runtime", "setup", "--from-archive", file, "--sha256", "0".repeat(64), "--bytes", "27", "--json"]);
    expect(wrongDigest.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_IMAGE_ARCHIVE_MISMATCH");
    const missingDigest = await cli(["runtime", "setup", "--from-archive", file, "--json"]);
    expect(missingDigest.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_LOCAL_RUNTIME_SETUP_FAILED");
  });
  test("doctor names keys by name only and checks a lab's route prerequisites", async () => {
    await requireDocker();
    const canary = "sk-canary-doctor-0123456789abcdef";
    const r = await cli(["doctor", "--lab", "codex-first-contact", "--cwd", tmp(), "--json"], { ...process.env, OPENAI_API_KEY: canary, CODEX_API_KEY: "" });
    expect(r.stdout).not.toContain(canary);
    const j = r.json<{ checks: { name: string; ok: boolean; required: boolean }[] }>();
    const key = j.checks.find((c) => c.name.startsWith("key CODEX_API_KEY"));
    expect(key).toMatchObject({ ok: true, required: true });
    expect(j.checks.find((c) => c.name === "docker engine")).toMatchObject({ ok: true, required: true });
    const noKey = await cli(["doctor", "--lab", "codex-first-contact", "--cwd", tmp(), "--json"], { ...process.env, OPENAI_API_KEY: "", CODEX_API_KEY: "" });
    expect(noKey.code).toBe(2);
    expect(noKey.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_DOCTOR_FAILED");
  });
});
