/**
 * The sandbox disk bound against the real engine: `dd` past the bound into one file fails
 * (RLIMIT_FSIZE, enforced by the kernel), and writes that add up past it across many files get
 * the sandbox stopped by the writable-layer watchdog with the reason kept — either way the host
 * keeps its space. The default bound is 2 GiB and reaches the container as its `fsize` ulimit.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createDockerClient } from "../../src/docker/index.ts";
import { HumanishError } from "../../src/errors.ts";
import { sandboxImageTag } from "../../src/runtime/recipes.ts";
import { createDockerSandboxProvider, DEFAULT_DISK_BYTES, type Sandbox } from "../../src/sandbox/index.ts";
import { rejection } from "../docker/helpers.ts";
import { requireImage } from "../support/prereq.ts";

const RUN = `test-disk-${process.pid}-${Date.now().toString(36)}`;
const MiB = 1024 * 1024;
const dec = new TextDecoder();
const docker = createDockerClient();
const made: Sandbox[] = [];

afterAll(async () => {
  for (const s of made) await s.release();
});

async function sandbox(diskBytes?: number, diskWatchMs?: number): Promise<Sandbox> {
  await requireImage(sandboxImageTag());
  const provider = createDockerSandboxProvider({ docker, ...(diskWatchMs ? { diskWatchMs } : {}) });
  const sb = await provider.create({ runId: RUN, image: sandboxImageTag(), ...(diskBytes ? { diskBytes } : {}) });
  made.push(sb);
  return sb;
}

describe("sandbox disk limit (real engine)", () => {
  test("default: a 2 GiB fsize ulimit on the container, reported by diskLimit()", async () => {
    const sb = await sandbox();
    const info = await docker.containerInspect(sb.id);
    expect(info.HostConfig.Ulimits).toEqual([{ Name: "fsize", Soft: DEFAULT_DISK_BYTES, Hard: DEFAULT_DISK_BYTES }]);
    // bash reports RLIMIT_FSIZE in 1024-byte blocks.
    const r = await sb.exec({ cmd: ["bash", "-c", "ulimit -f"] });
    expect(dec.decode(r.stdout).trim()).toBe(String(DEFAULT_DISK_BYTES / 1024));
    expect(sb.diskLimit?.()).toEqual({ limitBytes: DEFAULT_DISK_BYTES });
  });

  test("dd past the bound into one file fails, and the file stops at the bound", async () => {
    const sb = await sandbox(64 * MiB);
    const r = await sb.exec({ cmd: ["bash", "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1; echo exit=$?; stat -c %s /tmp/fill"] });
    const out = dec.decode(r.stdout);
    expect(out).toMatch(/File size limit exceeded|exit=153/);
    expect(out).not.toContain("exit=0");
    expect(Number(out.trim().split("\n").at(-1))).toBe(64 * MiB);
    // The bound holds for root too (product.install runs as root).
    const root = await sb.exec({ cmd: ["bash", "-c", "dd if=/dev/zero of=/root-fill bs=1M count=100 2>/dev/null; echo exit=$?"], user: "root" });
    expect(dec.decode(root.stdout)).not.toContain("exit=0");
  });

  test("fallocate cannot reserve disk faster than the watchdog polls: it is refused, posix_fallocate falls back to writing", async () => {
    const sb = await sandbox(64 * MiB);
    // Eight files under the per-file bound would reserve 8 × 60 MiB in microseconds through fallocate(2).
    const r = await sb.exec({
      cmd: ["bash", "-c", "for i in $(seq 1 8); do fallocate -l 60M /tmp/fa$i 2>&1 || echo refused; done; du -sk /tmp | cut -f1"],
    });
    const out = dec.decode(r.stdout);
    expect(out.match(/refused/g)?.length).toBe(8);
    expect(out).toMatch(/Operation not supported/);
    expect(Number(out.trim().split("\n").at(-1))).toBeLessThan(1024);
    const info = await docker.containerInspect(sb.id);
    expect(info.HostConfig.SecurityOpt?.some((o: string) => o.startsWith("seccomp="))).toBe(true);
    expect(info.HostConfig.SecurityOpt).toContain("no-new-privileges");
  });

  test("many files adding up past the bound: the watchdog stops the sandbox and says why", async () => {
    const sb = await sandbox(64 * MiB, 200);
    const e = await rejection(
      sb.exec({
        cmd: ["bash", "-c", "for i in $(seq 1 20); do dd if=/dev/zero of=/tmp/f$i bs=1M count=30 status=none || exit 9; sleep 0.2; done; echo all-written"],
      }),
    );
    expect(e).toBeInstanceOf(HumanishError);
    expect((e as HumanishError).code).toBe("HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED");
    expect((e as HumanishError).message).toContain(`over its ${64 * MiB}-byte disk limit`);
    const breach = sb.diskLimit?.().breach;
    expect(breach?.limitBytes).toBe(64 * MiB);
    expect(breach!.observedBytes).toBeGreaterThan(64 * MiB);
    // Far less than the 600 MiB the command would have written: the host kept its space.
    expect(breach!.observedBytes).toBeLessThan(400 * MiB);
    expect((await docker.containerInspect(sb.id)).State.Running).toBe(false);
    // Every later command says the same, instead of a confusing engine error.
    expect(((await rejection(sb.exec({ cmd: ["true"] }))) as HumanishError).code).toBe("HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED");
  }, 60_000);

  test("a bound below 1 MiB is refused before anything is created", async () => {
    const provider = createDockerSandboxProvider({ docker });
    const e = await rejection(provider.create({ runId: RUN, image: sandboxImageTag(), diskBytes: 1000 }));
    expect((e as HumanishError).code).toBe("HUMANISH_SANDBOX_CREATE_INVALID");
    expect((e as HumanishError).message).toContain("diskBytes");
  });
});
