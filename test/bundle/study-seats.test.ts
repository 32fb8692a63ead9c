/**
 * The `study seats` verify check on a real many-seat bundle (a 3-seat dry run) and on copies of
 * its run.json with one fact changed: a missing seat, totals that do not add up, a task result
 * missing for a seat, a funnel that miscounts, a release without its proof, spend over
 * maxTotalUsd. Each must fail the check and name the fact.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunBundle } from "../../src/bundle/schemas.ts";
import { studySeats } from "../../src/bundle/verify/checks-study.ts";
import type { VerifyContext } from "../../src/bundle/verify/context.ts";
import { cli } from "../cli/support.ts";

const cwd = mkdtempSync(join(tmpdir(), "humanish-study-seats-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function check(bundle: RunBundle): string[] {
  return studySeats({ bundle } as unknown as VerifyContext).problems;
}

test("study seats: a real 3-seat bundle passes; each changed fact fails with its name", async () => {
  const r = await cli(["lab", "run", "todomvc-first-run", "--dry-run", "--count", "3", "--json", "--cwd", cwd]);
  const runId = r.json<{ runId: string }>().runId;
  const base: RunBundle = JSON.parse(readFileSync(join(cwd, ".humanish", "runs", runId, "run.json"), "utf8"));
  expect(check(base)).toEqual([]);
  const copy = (): RunBundle => structuredClone(base);

  const missing = copy();
  missing.study!.seats.pop();
  expect(check(missing).join("; ")).toMatch(/study lists 2 seat\(s\) but declares 3/);

  const totals = copy();
  totals.study!.totals.completed = 2;
  expect(check(totals).join("; ")).toMatch(/totals\.completed 2 != 3 from the seats/);

  const task = copy();
  task.tasks.pop();
  expect(check(task).join("; ")).toMatch(/task clear-completed has 2 result\(s\) over 2 seat\(s\), expected one per seat \(3\)/);

  const funnel = copy();
  funnel.review.tasks.tasks[0]!.completed = 1;
  expect(check(funnel).join("; ")).toMatch(/review funnel says 1 completed add-two-todos, the task results say 0/);

  const proof = copy();
  proof.study!.seats[1]!.release = "released";
  expect(check(proof).join("; ")).toMatch(/seat p2: release released but no cleanup proof/);

  const spend = copy();
  spend.study!.maxTotalUsd = 0.5;
  spend.study!.seats[0]!.usd = 0.75;
  spend.study!.totals.knownUsd = 0.75;
  expect(check(spend).join("; ")).toMatch(/known study spend 0.75 USD exceeds maxTotalUsd 0.5/);

  const participants = copy();
  participants.participants.reverse();
  expect(check(participants).join("; ")).toMatch(/participants \[p3, p2, p1\] are not the seats \[p1, p2, p3\]/);
});
