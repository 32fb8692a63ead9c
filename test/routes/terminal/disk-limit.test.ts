/**
 * A terminal seat that writes past `execution.limits.diskMiB` is stopped, and the study says
 * why: the result's error, the participant's reason in run.json, and the lifecycle line naming
 * the bound. The bundle still verifies. (Sandbox-level mechanics: test/sandbox/disk-limit.test.ts.)
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../../cli/support.ts";
import { requireDocker } from "../../support/prereq.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-disk-lab-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("dd past the lab's disk bound stops the seat with the reason recorded in the bundle", async () => {
  await requireDocker();
  const lab = join(dir, "fill.yaml");
  writeFileSync(
    lab,
    [
      "schema: humanish.lab.v2",
      "id: disk-fill",
      "title: disk fill",
      "description: A participant writes far past the seat's disk limit.",
      "subject:",
      "  source: terminal-product",
      "  product:",
      "    name: dd",
      "    publicSurfaces: [https://www.gnu.org/software/coreutils/]",
      "actors:",
      "  - type: scripted-terminal",
      "    tasks:",
      "      - id: wrote-all",
      "        goal: Write 1.2 GB of files.",
      "        check:",
      "          run: test -f /tmp/f40",
      "    steps:",
      "      - run: for i in $(seq 1 40); do dd if=/dev/zero of=/tmp/f$i bs=1M count=30 status=none; sleep 0.3; done; echo wrote-all",
      "execution:",
      "  target: docker",
      "  limits:",
      "    diskMiB: 64",
      "scenario:",
      "  mode: live",
      "  caps: {maxUsd: 0, maxMinutes: 2}",
      "",
    ].join("\n"),
  );
  const r = await cli(["lab", "run", lab, "--json", "--cwd", dir]);
  const j = r.json<{ ok: boolean; runDir: string; verify: { ok: boolean }; error: { code: string; message: string } }>();
  expect(j.ok).toBe(false);
  expect(j.error.code).toBe("HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED");
  expect(j.error.message).toContain(`over its ${64 * 1024 * 1024}-byte disk limit; it was stopped`);
  expect(j.verify.ok).toBe(true);
  const run = readFileSync(join(dir, j.runDir, "run.json"), "utf8");
  expect(run).toContain("HUMANISH_SANDBOX_DISK_LIMIT_EXCEEDED");
  expect(run).toContain("disk limit 64 MiB");
  // Filling the disk is the participant's doing: it ran out of a bounded resource (a finding),
  // never a harness failure.
  const bundle = JSON.parse(run) as { participants: { completionReason: string; reason: string }[]; review: { summary: string } };
  expect(bundle.participants[0]!.completionReason).toBe("budget_reached");
  expect(bundle.participants[0]!.reason).toContain("disk_limit");
  expect(bundle.review.summary).not.toContain("harness failure");
}, 120_000);

test("execution.limits.diskMiB is validated and only accepted where it acts", async () => {
  const base = (execution: string) =>
    [
      "schema: humanish.lab.v2",
      "id: disk-schema",
      "title: disk schema",
      "description: Schema checks of execution.limits.",
      "subject:",
      "  source: terminal-product",
      "  product:",
      "    name: dd",
      "    publicSurfaces: [https://www.gnu.org/software/coreutils/]",
      "actors:",
      "  - type: scripted-terminal",
      "    steps:",
      "      - run: 'true'",
      execution,
      "scenario:",
      "  caps: {maxUsd: 0, maxMinutes: 2}",
      "",
    ].join("\n");
  const inspect = async (name: string, execution: string) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(f, base(execution));
    return (await cli(["lab", "inspect", f, "--json", "--cwd", dir])).json<{ ok: boolean; error?: { code: string; message: string } }>();
  };
  expect((await inspect("ok", "execution:\n  target: docker\n  limits:\n    diskMiB: 512")).ok).toBe(true);
  const zero = await inspect("zero", "execution:\n  target: docker\n  limits:\n    diskMiB: 0");
  expect(zero.error?.code).toBe("HUMANISH_LAB_INVALID");
  expect(zero.error?.message).toContain("execution.limits.diskMiB");
  const typo = await inspect("typo", "execution:\n  target: docker\n  limits:\n    diskMib: 512");
  expect(typo.error?.code).toBe("HUMANISH_LAB_INVALID");
  const e2b = await inspect("e2b", "execution:\n  target: e2b-terminal\n  limits:\n    diskMiB: 512");
  expect(e2b.error?.code).toBe("HUMANISH_LAB_INVALID");
  expect(e2b.error?.message).toContain("only acts on target docker");
});
