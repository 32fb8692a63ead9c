import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
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
  test("setup --only sandbox sets up only the sandbox image and says how many bytes it added", async () => {
    await requireDocker();
    const r = await cli(["runtime", "setup", "--only", "sandbox", "--json"]);
    const j = r.json<{ ok: boolean; actions: string[]; addedBytes: number; images: { sandbox: { present: boolean; node: { version: string } | null } } }>();
    expect(j.ok).toBe(true);
    expect(j.images.sandbox.present).toBe(true);
    expect(j.images.sandbox.node?.version).toMatch(/^22\./);
    // Already present: nothing built, the guest image untouched, nothing added.
    expect(j.actions.filter((a) => a.includes("humanish-guest"))).toEqual([]);
    expect(j.actions.some((a) => a.startsWith("humanish-sandbox:") && a.endsWith("already present"))).toBe(true);
    expect(j.addedBytes).toBe(0);
    const human = await cli(["runtime", "setup", "--only", "sandbox"]);
    expect(human.stdout).toContain("added 0 bytes of image layers");
  });
  test("setup --only is validated: an unknown image, or combined with --from-archive, is a usage error", async () => {
    await requireDocker();
    const bad = await cli(["runtime", "setup", "--only", "everything", "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.json<{ error: { code: string; message: string } }>().error).toMatchObject({ code: "HUMANISH_USAGE" });
    expect(bad.json<{ error: { message: string } }>().error.message).toContain("--only must be sandbox or guest");
    const dir = tmp();
    const file = join(dir, "image.tar");
    writeFileSync(file, "x");
    const sha = new Bun.CryptoHasher("sha256").update("x").digest("hex");
    const both = await cli(["runtime", "setup", "--only", "guest", "--from-archive", file, "--sha256", sha, "--bytes", "1", "--json"]);
    expect(both.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_USAGE");
    expect((await cli(["runtime", "setup", "--help"])).stdout).toContain("--only");
  });
  test("doctor shows the sandbox image's Node version and tarball SHA-256", async () => {
    await requireDocker();
    const r = await cli(["doctor", "--cwd", tmp(), "--json"]);
    const sandbox = r.json<{ checks: { name: string; message: string }[] }>().checks.find((c) => c.name === "sandbox image");
    expect(sandbox?.message).toMatch(/node 22\.\d+\.\d+, tarball sha256 [0-9a-f]{64}/);
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
    // The model seat: endpoint host, key by name, and the price row (the lab declares no model:
    // Codex's own default, priced per request by the model each response names).
    const rows = j.checks as { name: string; ok: boolean; required: boolean; message: string }[];
    expect(rows.find((c) => c.name === "model endpoint")).toMatchObject({ ok: true, required: true });
    expect(rows.find((c) => c.name === "model endpoint")?.message).toContain("api.openai.com");
    expect(rows.find((c) => c.name === "model key")?.message).toContain("OPENAI_API_KEY is set; runtimeAuth openai-egress");
    expect(rows.find((c) => c.name === "model price")).toMatchObject({ ok: true, required: false });
    expect(rows.find((c) => c.name === "model price")?.message).toStartWith("no model declared");
    const noKey = await cli(["doctor", "--lab", "codex-first-contact", "--cwd", tmp(), "--json"], { ...process.env, OPENAI_API_KEY: "", CODEX_API_KEY: "" });
    expect(noKey.code).toBe(2);
    const err = noKey.json<{ error: { code: string; next: string } }>().error;
    expect(err.code).toBe("HUMANISH_DOCTOR_FAILED");
    // Off a TTY the next step names the failed check itself, not rows a script never saw.
    expect(err.next).toStartWith("fix each failed check, then run doctor again: ");
    expect(err.next).toContain("CODEX_API_KEY");
    expect(err.next).not.toContain("rows above");
  });
});

describe("lab run --live interrupted (real engine)", () => {
  test("SIGINT mid-participant: exit 130, the message names the bundle by its project path, no container left", async () => {
    await requireDocker();
    const { runCli } = await import("../../src/cli/run.ts");
    const { containersOfRun, removeContainers } = await import("../routes/terminal/support.ts");
    const dir = tmp();
    const runId = `cli-sigint-${Date.now().toString(36)}`;
    mkdirSync(join(dir, "humanish", "labs"), { recursive: true });
    writeFileSync(
      join(dir, "humanish", "labs", "hang.yaml"),
      [
        "schema: humanish.lab.v2",
        "id: hang",
        "title: a participant that hangs",
        "subject:",
        "  source: terminal-product",
        "  product:",
        "    name: sleep",
        "    publicSurfaces: [https://www.gnu.org/software/coreutils/]",
        "actors:",
        "  - type: scripted-terminal",
        "    steps:",
        "      - run: sleep 600",
        "execution:",
        "  target: docker",
        "scenario:",
        "  mode: live",
        "  caps: {maxUsd: 0, maxMinutes: 5}",
        "",
      ].join("\n"),
    );
    let stdout = "";
    let stderr = "";
    let sent = false;
    const io = {
      stdout: (t: string) => void (stdout += t),
      stderr: (t: string) => {
        stderr += t;
        if (!sent && t.includes("step 1/1")) {
          sent = true;
          setTimeout(() => process.kill(process.pid, "SIGINT"), 300);
        }
      },
      stderrIsTTY: false,
      stdinIsTTY: false,
      env: process.env,
    };
    try {
      const code = await runCli(["lab", "run", "hang", "--live", "--run-id", runId, "--cwd", dir], io);
      expect(sent).toBe(true);
      expect(code).toBe(130);
      expect(stderr).toContain(`the partial bundle is in .humanish/runs/${runId}`);
      expect(stderr).not.toContain("REDACTED");
      expect(stdout).toContain(`run:    .humanish/runs/${runId}`);
      const errLines: string[] = [];
      const code2 = await runCli(["verify", "--run", runId, "--cwd", dir], { ...io, stdout: () => undefined, stderr: (t: string) => void errLines.push(t) });
      expect(code2).toBe(0);
      expect(await containersOfRun(runId)).toEqual([]);
      // The same run again in --json mode is refused (the id exists); read the first envelope instead.
      const json = { out: "" };
      const again = await runCli(["lab", "run", "hang", "--live", "--run-id", runId, "--cwd", dir, "--json"], {
        ...io,
        stdout: (t: string) => void (json.out += t),
      });
      expect(again).toBe(2);
      expect(JSON.parse(json.out).error.code).toBe("HUMANISH_RUN_ID_IN_USE");
    } finally {
      await removeContainers(await containersOfRun(runId));
    }
  }, 120_000);
});
