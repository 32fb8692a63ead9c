/**
 * `lab run --rerun-failed-from RUN` end to end on the real Docker engine: a two-seat scripted
 * terminal study whose second seat is stopped before it starts (a harness condition, never a
 * finding) is continued by the CLI, which runs only that seat as a new run linked to the first;
 * both verify, `runs` shows the combined denominator, the report lists the earlier attempt, and
 * `runs compare` reads the combined result. Then every refusal: a bad --rerun-which, --count,
 * nothing to rerun, another lab, a changed lab text, a dry run, and a tampered earlier run (which
 * also fails the continued run's own link check).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTerminalStudy } from "../../src/routes/terminal/index.ts";
import { containersOfRun, labFromText, removeContainers, studyContext, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { requireDocker } from "../support/prereq.ts";
import { scriptedTerminalLab } from "../support/terminal-study.ts";
import { cli } from "./support.ts";

const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

const text = scriptedTerminalLab({ id: "rerun-lab", steps: ["touch done.txt"], count: 2, concurrency: 1 });
const labPath = join(project.dir, "lab.yaml");
writeFileSync(labPath, text);

type Failure = { ok: boolean; schema: string; error: { code: string; message: string; next?: string } };

async function refused(args: string[], code: string): Promise<Failure> {
  const r = await cli(["lab", "run", labPath, "--cwd", project.dir, "--json", ...args]);
  const out = r.json<Failure>();
  expect({ code: r.code === 0 ? 0 : "failed", error: out.error?.code }).toEqual({ code: "failed", error: code });
  expect(out.ok).toBe(false);
  expect(out.schema).toBeTruthy();
  expect(out.error.next).toBeTruthy();
  return out;
}

describe("lab run --rerun-failed-from", () => {
  const first = testRunId("rr1");
  const second = testRunId("rr2");
  runIds.push(first, second);

  test("a seat stopped before it ran is rerun alone, as a new run linked to the first; both verify; runs, the report and runs compare read the combined result", async () => {
    await requireDocker();
    // The first run: seats run one at a time, and the study is stopped the moment p2 asks for a
    // slot, so p1 completes and p2 never starts (interrupted: a harness condition).
    const ac = new AbortController();
    const ctx = studyContext({
      cwd: project.dir,
      lab: labFromText(text),
      text,
      ref: "lab.yaml",
      runId: first,
      mode: "live",
      env: { ...process.env },
      signal: ac.signal,
    });
    ctx.progress = (e) => {
      if (e.participant === "p2" && e.phase === "allocate") ac.abort("SIGINT");
    };
    const r1 = await runTerminalStudy(ctx);
    expect(r1.verify.ok).toBe(true);
    expect(r1.participants.map((p) => [p.id, p.status, p.completionReason])).toEqual([
      ["p1", "passed", "goal_satisfied"],
      ["p2", "failed", "interrupted"],
    ]);

    const run = await cli(["lab", "run", labPath, "--cwd", project.dir, "--json", "--rerun-failed-from", first, "--run-id", second]);
    const out = run.json<Record<string, any>>();
    expect({ code: run.code, error: out.error }).toEqual({ code: 0, error: undefined });
    expect(out.participants.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([["p2", "passed"]]);
    expect(out.verdict).toBe("1/1 reached the goal; tasks: made-file 1/1");
    expect(out.continues).toMatchObject({ runId: first, which: "harness", seats: ["p2"] });
    expect(out.combined).toEqual({
      line: "2/2 reached the goal; tasks: made-file 2/2 — combined over 2 runs, each seat its last attempt (1 rerun)",
      total: 2,
      reachedGoal: 2,
      harnessFailed: 0,
      runIds: [first, second],
    });
    const bundle = JSON.parse(readFileSync(join(project.dir, ".humanish", "runs", second, "run.json"), "utf8"));
    const firstBytes = readFileSync(join(project.dir, ".humanish", "runs", first, "run.json"));
    expect(bundle.continues.runJsonSha256).toBe(new Bun.CryptoHasher("sha256").update(firstBytes).digest("hex"));

    for (const id of [first, second]) {
      const v = await cli(["verify", "--run", id, "--cwd", project.dir, "--json"]);
      expect({ id, code: v.code }).toEqual({ id, code: 0 });
      if (id === second)
        expect(v.json<{ checks: { name: string; message: string }[] }>().checks.find((c) => c.name === "continued run")?.message).toMatch(
          new RegExp(`^continues ${first} \\(harness: p2\\); its run.json matches the recorded SHA-256$`),
        );
    }

    const runs = await cli(["runs", "--cwd", project.dir]);
    const row = runs.stdout.split("\n").find((l) => l.startsWith(second));
    expect(row).toContain(" 2/2 ");
    expect(row).toContain(
      `2/2 reached the goal; tasks: made-file 2/2 — combined over 2 runs, each seat its last attempt (1 rerun); this run (continues ${first}): 1/1 reached the goal`,
    );

    const html = readFileSync(join(project.dir, ".humanish", "runs", second, "report", "index.html"), "utf8");
    expect(html).toContain('id="combined-line"');
    expect(html).toContain(`failed (interrupted) in ${first} — harness failure, not a finding`);

    const cmp = await cli(["runs", "compare", first, second, "--cwd", project.dir, "--json"]);
    const c = cmp.json<{ comparison: { goal: { a: unknown; b: unknown }; b: { participants: number }; notes: string[] } }>().comparison;
    expect(cmp.code).toBe(0);
    expect(c.goal.a).toEqual({ reached: 1, observed: 1, excluded: 1, rate: 1 });
    expect(c.goal.b).toEqual({ reached: 2, observed: 2, excluded: 0, rate: 1 });
    expect(c.b.participants).toBe(2);
    expect(c.notes).toContain(
      `run B is the combined result of runs ${first} → ${second}: each seat counted once, its last attempt (cost and wall time are of every run)`,
    );
    expect(await containersOfRun(second)).toEqual([]);
  }, 300_000);

  test("refusals, each with its code and a next step: bad --rerun-which, --count, nothing to rerun, another lab, a changed lab, a dry run, a tampered run", async () => {
    await requireDocker();
    await refused(["--rerun-failed-from", first, "--rerun-which", "all"], "HUMANISH_RERUN_WHICH_INVALID");
    await refused(["--rerun-failed-from", first, "--count", "2"], "HUMANISH_LAB_OPTION_CONFLICT");
    await refused(["--rerun-which", "harness"], "HUMANISH_LAB_OPTION_CONFLICT");
    await refused(["--rerun-failed-from", "no-such-run"], "HUMANISH_RUN_NOT_FOUND");
    // The chain ending at the second run has every seat at the goal.
    const nothing = await refused(["--rerun-failed-from", second], "HUMANISH_RERUN_NOTHING");
    expect(nothing.error.message).toContain("no seat failed as a harness");
    const other = join(project.dir, "other.yaml");
    writeFileSync(other, scriptedTerminalLab({ id: "other-lab", steps: ["touch done.txt"], count: 2 }));
    const mismatch = await cli(["lab", "run", other, "--cwd", project.dir, "--json", "--rerun-failed-from", first]);
    expect(mismatch.json<Failure>().error.code).toBe("HUMANISH_RERUN_LAB_MISMATCH");
    const changed = join(project.dir, "changed.yaml");
    writeFileSync(changed, `${text}# edited\n`);
    const c = await cli(["lab", "run", changed, "--cwd", project.dir, "--json", "--rerun-failed-from", first]);
    expect(c.json<Failure>().error.code).toBe("HUMANISH_RERUN_LAB_CHANGED");
    const dry = testRunId("rrdry");
    const d = await cli(["lab", "run", labPath, "--cwd", project.dir, "--json", "--dry-run", "--run-id", dry]);
    expect(d.code).toBe(0);
    await refused(["--rerun-failed-from", dry], "HUMANISH_RERUN_DRY_RUN");
    await refused(["--rerun-failed-from", first, "--dry-run"], "HUMANISH_LAB_OPTION_CONFLICT");

    // The continued run copied alone: its link's shape verifies, and a warning says the digest was not checked.
    const alone = tmpProject();
    try {
      cpSync(join(project.dir, ".humanish", "runs", second), join(alone.dir, ".humanish", "runs", second), { recursive: true });
      const v = await cli(["verify", "--run", second, "--cwd", alone.dir, "--json"]);
      const out = v.json<{ ok: boolean; warnings: string[]; checks: { name: string; message: string }[] }>();
      expect(out.ok).toBe(true);
      expect(out.checks.find((x) => x.name === "continued run")?.message).toBe(
        `continues ${first} (harness: p2); that run is not here, so only the link's shape was checked`,
      );
      expect(out.warnings).toContain(`this run continues ${first}, which is not beside it: the link's digest was not checked (verify the two side by side)`);
      // Continuing it needs the chain: the run it continues is not there.
      const broken = await cli(["lab", "run", labPath, "--cwd", alone.dir, "--json", "--rerun-failed-from", second]);
      expect(broken.json<Failure>().error).toMatchObject({
        code: "HUMANISH_CONTINUES_BROKEN",
        message: expect.stringContaining(`run ${first} is not in .humanish/runs`),
      });
    } finally {
      alone.cleanup();
    }

    // Tamper with the first run: it no longer verifies, and the second run's link no longer holds.
    const path = join(project.dir, ".humanish", "runs", first, "run.json");
    writeFileSync(path, readFileSync(path, "utf8").replace('"reason":', '"reason": '));
    const t = await refused(["--rerun-failed-from", first], "HUMANISH_RERUN_UNVERIFIED");
    expect(t.error.message).toContain("bundle signature");
    const v = await cli(["verify", "--run", second, "--cwd", project.dir, "--json"]);
    expect(v.code).not.toBe(0);
    expect(v.json<{ checks: { name: string; ok: boolean; message: string }[] }>().checks.find((x) => x.name === "continued run")).toMatchObject({
      ok: false,
      message: expect.stringContaining(`run ${first}'s run.json has SHA-256`),
    });
    const cmp = await cli(["runs", "compare", first, second, "--cwd", project.dir, "--json"]);
    expect(cmp.json<Failure>().error.code).toBe("HUMANISH_INVALID_RUN_BUNDLE");
  }, 120_000);
});
