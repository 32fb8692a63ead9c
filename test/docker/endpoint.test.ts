/**
 * The one rule for finding the Docker engine (resolveDockerSocket / dockerClientFor), and that
 * every command gives the same answer for a `DOCKER_HOST` from the environment and from
 * `--env-file` — browser and terminal labs alike — against the real engine, reached through a
 * symlink to its socket.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_DOCKER_SOCKET, DOCKER_HOST_UNSUPPORTED, dockerClientFor, resolveDockerSocket } from "../../src/docker/index.ts";
import { HumanishError } from "../../src/errors.ts";
import { NODE_ARTIFACT } from "../../src/runtime/recipes.ts";
import { cli } from "../cli/support.ts";
import { requireDocker } from "../support/prereq.ts";

function refusal(host: string): HumanishError {
  try {
    resolveDockerSocket({ DOCKER_HOST: host });
  } catch (e) {
    if (e instanceof HumanishError) return e;
    throw e;
  }
  throw new Error(`DOCKER_HOST=${host} was accepted`);
}

describe("resolveDockerSocket", () => {
  test("unset or empty → the default socket; unix:///abs → that path", () => {
    expect(resolveDockerSocket({})).toBe(DEFAULT_DOCKER_SOCKET);
    expect(resolveDockerSocket({ DOCKER_HOST: "" })).toBe("/var/run/docker.sock");
    expect(resolveDockerSocket({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" })).toBe("/run/user/1000/docker.sock");
    expect(dockerClientFor({ DOCKER_HOST: "unix:///tmp/x.sock" }).socketPath).toBe("/tmp/x.sock");
    expect(dockerClientFor({}).socketPath).toBe(DEFAULT_DOCKER_SOCKET);
  });

  test("tcp, ssh, npipe, http, a relative or empty unix path, and bare words are refused with a next step", () => {
    for (const [host, scheme] of [
      ["tcp://10.0.0.1:2375", "tcp"],
      ["ssh://me@build-host", "ssh"],
      ["npipe:////./pipe/docker_engine", "npipe"],
      ["http://localhost:2375", "http"],
      ["unix://var/run/docker.sock", "unix"],
      ["unix://", "unix"],
      ["/var/run/docker.sock", undefined],
    ] as const) {
      const e = refusal(host);
      expect(e.code).toBe(DOCKER_HOST_UNSUPPORTED);
      expect(e.message).toContain(`DOCKER_HOST=${host}`);
      expect(e.next).toContain("DOCKER_HOST=unix:///");
      expect((e.details as { scheme?: string }).scheme).toBe(scheme);
    }
    expect(() => dockerClientFor({ DOCKER_HOST: "tcp://h:2375" })).toThrow(HumanishError);
  });
});

describe("DOCKER_HOST from --env-file (real engine)", () => {
  const dir = mkdtempSync(join(tmpdir(), "humanish-endpoint-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function envFile(name: string, dockerHost: string): string {
    const f = join(dir, name);
    writeFileSync(f, `DOCKER_HOST=${dockerHost}\n`);
    return f;
  }

  test("doctor: the env-file's DOCKER_HOST wins over the environment's, whatever it says", async () => {
    const real = await requireDocker();
    const link = join(dir, "linked-docker.sock");
    symlinkSync(real, link);
    const env = { ...process.env, DOCKER_HOST: "unix:///nonexistent/humanish-endpoint.sock" };
    const good = await cli(["doctor", "--json", "--cwd", dir, "--env-file", envFile("good.env", `unix://${link}`)], env);
    const engine = good.json<{ checks: { name: string; ok: boolean }[] }>().checks.find((c) => c.name === "docker engine");
    expect(engine?.ok).toBe(true);
    const tcp = await cli(["doctor", "--json", "--cwd", dir, "--env-file", envFile("tcp.env", "tcp://127.0.0.1:2375")], { ...process.env });
    expect(tcp.json<{ error: { code: string } }>().error.code).toBe(DOCKER_HOST_UNSUPPORTED);
  });

  test("a terminal lab honours the env-file's DOCKER_HOST (it used to ignore it)", async () => {
    const real = await requireDocker();
    const project = join(dir, "project");
    mkdirSync(join(project, "labs"), { recursive: true });
    writeFileSync(
      join(project, "labs", "endpoint-probe.yaml"),
      [
        "schema: humanish.lab.v2",
        "id: endpoint-probe",
        "title: endpoint probe",
        "description: A scripted participant prints the Node version; proves which engine ran it.",
        "subject:",
        "  source: terminal-product",
        "  product:",
        "    name: node",
        "    publicSurfaces: [https://nodejs.org/]",
        "actors:",
        "  - type: scripted-terminal",
        "    tasks:",
        "      - id: node-runs",
        "        goal: Print the Node version.",
        "        check:",
        "          run: node --version",
        "    steps:",
        "      - run: node --version",
        "        expectExit: 0",
        "execution:",
        "  target: docker",
        "scenario:",
        "  mode: live",
        "  caps:",
        "    maxUsd: 0",
        "    maxMinutes: 2",
        "",
      ].join("\n"),
    );
    // A socket path that does not exist, given only in the env-file: the run must fail naming it.
    const missing = join(dir, "no-engine-here.sock");
    const bad = await cli(["lab", "run", "labs/endpoint-probe.yaml", "--json", "--cwd", project, "--env-file", envFile("missing.env", `unix://${missing}`)]);
    const badJson = bad.json<{ ok: boolean; error: { code: string; message: string } }>();
    expect(badJson.ok).toBe(false);
    expect(badJson.error.code).toBe("HUMANISH_DOCKER_UNAVAILABLE");
    expect(badJson.error.message).toContain("no-engine-here.sock");
    // The real engine through a symlink, given only in the env-file (the environment names a dead one).
    const link = join(dir, "terminal-docker.sock");
    symlinkSync(real, link);
    const good = await cli(["lab", "run", "labs/endpoint-probe.yaml", "--json", "--cwd", project, "--env-file", envFile("terminal.env", `unix://${link}`)], {
      ...process.env,
      DOCKER_HOST: "unix:///nonexistent/humanish-endpoint.sock",
    });
    const j = good.json<{ ok: boolean; runDir: string; error?: { code: string; message: string } }>();
    expect(j.error).toBeUndefined();
    expect(j.ok).toBe(true);
    // The bundle records the sandbox image's Node facts and the seat's disk bound.
    const texts = readdirSync(join(project, j.runDir), { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => readFileSync(join(d.parentPath, d.name), "utf8"));
    const all = texts.join("\n");
    expect(all).toContain("terminal-lab.run.created");
    expect(all).toContain(`node ${NODE_ARTIFACT.npmSpec.split("@")[1]} (tarball sha256 ${NODE_ARTIFACT.sha256})`);
    expect(all).toContain("disk limit 2048 MiB");
  }, 120_000);
});
