/**
 * `humanish runs compare` on real runs: three scripted terminal studies on the real Docker
 * sandbox (the same lab before and after a fix at 2 seats each, and a one-seat run of another
 * lab), compared through the CLI: the rates with their denominators, the Fisher p-value and
 * "not distinguishable at these sample sizes", `latest~1 latest`, the HTML page, and the
 * refusals — another lab (unless allowed), a dry run, the same run twice, a tampered run; and
 * the export of the 2-seat run, one ATIF trajectory per seat.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Comparison } from "../../src/compare/core.ts";
import { validateAtif } from "../../src/export/atif/validate.ts";
import { writeDryRunTerminal } from "../bundle/helpers.ts";
import { cli } from "../cli/support.ts";
import { containersOfRun, removeContainers, testRunId, tmpProject } from "../routes/terminal/support.ts";
import { requireDocker } from "../support/prereq.ts";
import { scriptedTerminalLab, verifiedTerminalStudy } from "../support/terminal-study.ts";

/** A scripted lab whose one step does `step`; its hidden check wants done.txt. */
const lab = (id: string, count: number, step: string) => scriptedTerminalLab({ id, count, steps: [step] });

const project = tmpProject();
const runIds: string[] = [];
const ids = { before: testRunId("cmp-before"), after: testRunId("cmp-after"), other: testRunId("cmp-other") };

async function study(runId: string, text: string): Promise<void> {
  runIds.push(runId);
  await verifiedTerminalStudy({ dir: project.dir, text, runId });
}

beforeAll(async () => {
  await requireDocker();
  await study(ids.other, lab("cmp-other", 1, "touch done.txt"));
  // Before the fix the product never writes the file; after it, it does. Same lab id, new text.
  await study(ids.before, lab("cmp", 2, "echo the product forgot the file"));
  await study(ids.after, lab("cmp", 2, "echo fixed; touch done.txt"));
}, 600_000);

afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

const compare = (...args: string[]) => cli(["runs", "compare", ...args, "--cwd", project.dir]);

describe("runs compare on real runs", () => {
  test("per task the rates with denominators, the difference and the Fisher p-value; 0/2 → 2/2 is not distinguishable", async () => {
    const r = await compare(ids.before, ids.after, "--json");
    expect(r.code).toBe(0);
    const out = r.json<{ schema: string; ok: boolean; comparison: Comparison }>();
    expect(out.schema).toBe("humanish.runs-compare-result.v1");
    expect(out.ok).toBe(true);
    const c = out.comparison;
    expect([c.a.runId, c.b.runId, c.a.lab, c.b.lab]).toEqual([ids.before, ids.after, "cmp", "cmp"]);
    expect(c.tasks).toHaveLength(1);
    const t = c.tasks[0]!;
    expect(t.id).toBe("made-file");
    expect([t.a, t.b]).toEqual([
      { reached: 0, observed: 2, excluded: 0, rate: 0 },
      { reached: 2, observed: 2, excluded: 0, rate: 1 },
    ]);
    expect(t.differencePoints).toBe(100);
    expect(t.pValue).toBeCloseTo(1 / 3, 10);
    expect(t.verdict).toBe("not_distinguishable");
    // Every scripted step exited 0 in both runs, but the hidden checks decide the goal: 0/2 before, 2/2 after.
    expect([c.goal.a?.reached, c.goal.a?.observed, c.goal.b?.reached, c.goal.b?.observed]).toEqual([0, 2, 2, 2]);
    expect(c.goal.pValue).toBeCloseTo(1 / 3, 10);
    expect(c.threshold).toBe(0.05);
    expect(c.test).toBe("fisher-exact-two-sided");
    expect(c.notes).toContain("the lab text differs between the runs (its SHA-256 changed)");
    // Cost and time side by side: a scripted study's provider lines are known zeros; the rest is unmeasured, never 0.
    for (const side of [c.a, c.b]) {
      expect(side.durationMs).toBeGreaterThan(0);
      expect(side.cost.lines).toBeGreaterThan(0);
      expect(side.participants).toBe(2);
    }
    const human = await compare(ids.before, ids.after);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/task made-file\s+0\/2\s+→ 2\/2\s+\+100 pts\s+p = 0\.333\s+not distinguishable at these sample sizes/);
    expect(human.stdout).toContain("distinguishable only when p < 0.05");
    expect(human.stdout).toMatch(/cost\s+.+\s+→ /);
    expect(human.stdout).toMatch(/time\s+\d[\d.]*(?: ms| s|m \d+s)\s+→ \d[\d.]*(?: ms| s|m \d+s)/);
  });

  test("latest~1 latest names the two newest runs; --html writes a self-contained page", async () => {
    const byRef = (await compare("latest~1", "latest", "--json")).json<{ comparison: Comparison }>().comparison;
    expect([byRef.a.runId, byRef.b.runId]).toEqual([ids.before, ids.after]);
    const r = await compare("latest~1", "latest", "--html", "cmp.html", "--json");
    expect(r.json<{ html: string }>().html).toBe("cmp.html");
    const html = readFileSync(join(project.dir, "cmp.html"), "utf8");
    expect(html).toContain('<section id="compare">');
    expect(html).toContain("not distinguishable at these sample sizes");
    expect(html).toContain("Content-Security-Policy");
    expect(html).not.toContain("<script");
    expect((await compare("latest~9", "latest", "--json")).json<{ error: { code: string } }>().error.code).toBe("HUMANISH_RUN_NOT_FOUND");
  });

  test("runs of another lab are refused unless --allow-different-labs; a dry run and the same run twice are refused", async () => {
    const other = await compare(ids.other, ids.after, "--json");
    expect(other.code).not.toBe(0);
    expect(other.json<{ ok: boolean; error: { code: string; message: string } }>().error).toMatchObject({
      code: "HUMANISH_COMPARE_LAB_MISMATCH",
      message: expect.stringContaining("lab cmp-other and run B of lab cmp"),
    });
    const allowed = (await compare(ids.other, ids.after, "--allow-different-labs", "--json")).json<{ ok: boolean; comparison: Comparison }>();
    expect(allowed.ok).toBe(true);
    expect(allowed.comparison.notes[0]).toMatch(/different labs \(cmp-other and cmp\)/);
    await writeDryRunTerminal(project.dir, "cmp-dry-1");
    const dry = await compare(ids.after, "cmp-dry-1", "--json");
    expect(dry.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_COMPARE_DRY_RUN");
    const same = await compare(ids.after, ids.after, "--json");
    expect(same.json<{ error: { code: string } }>().error.code).toBe("HUMANISH_COMPARE_SAME_RUN");
  });

  test("the same 2-seat run exports one valid ATIF trajectory per seat, each with its own seat's checks", async () => {
    const r = await cli(["export", "--run", ids.after, "--format", "atif", "--cwd", project.dir, "--json"]);
    expect(r.code).toBe(0);
    const out = r.json<{ exported: { participantId: string; path: string }[] }>();
    expect(out.exported.map((e) => e.participantId)).toEqual(["p1", "p2"]);
    for (const e of out.exported) {
      const t = JSON.parse(readFileSync(join(project.dir, e.path), "utf8"));
      expect(validateAtif(t).errors).toEqual([]);
      expect(t.session_id).toBe(`${ids.after}/${e.participantId}`);
      expect(t.extra.humanish.trace).toBe(`seats/${e.participantId}/actor.json`);
      expect(t.steps.at(-1).message).toMatch(/hidden checks: made-file passed$/);
    }
  });

  test("a tampered run is refused, naming the failed check (runs last: it breaks run B)", async () => {
    const transcript = join(project.dir, ".humanish", "runs", ids.after, "seats", "p1", "terminal-transcript.txt");
    appendFileSync(transcript, "a line nobody recorded\n");
    const r = await compare(ids.before, ids.after, "--json");
    expect(r.code).not.toBe(0);
    const err = r.json<{ ok: boolean; error: { code: string; message: string; next: string } }>();
    expect(err.ok).toBe(false);
    expect(err.error.code).toBe("HUMANISH_INVALID_RUN_BUNDLE");
    expect(err.error.message).toContain(`run ${ids.after} does not verify (failed: `);
    expect(err.error.next).toBe(`see why with: humanish verify --run ${ids.after}`);
  });
});
