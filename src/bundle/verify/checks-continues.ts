/**
 * `continued run`: a run made by `lab run --rerun-failed-from` names the run it continues
 * (`continues` in run.json). Always checked: the link's shape — another run, a live run, its
 * rerun seats unique and exactly this run's participants. When the earlier run is beside it in
 * the runs directory: the SHA-256 of its `run.json` bytes is the one recorded, it is of the same
 * lab, live, and it had every rerun seat. The earlier run's own evidence is judged by verifying
 * that run; this check ties the two together. When the earlier run is absent (a bundle copied
 * alone), only the shape is checked and a warning says the link could not be followed.
 */
import { sha256Hex } from "../../bytes/sha256.ts";
import { type RunBundle, RunBundleSchema } from "../schemas.ts";
import type { CheckOutcome, VerifyContext } from "./context.ts";

function shapeProblems(b: RunBundle): string[] {
  const c = b.continues!;
  const problems: string[] = [];
  if (c.runId === b.runId) problems.push("continues names the run itself");
  if (b.mode !== "live") problems.push(`a ${b.mode} run continues ${c.runId}; only live runs continue one`);
  if (new Set(c.seats).size !== c.seats.length) problems.push("continues.seats repeats a seat");
  const ids = b.participants.map((p) => p.id);
  if (JSON.stringify([...c.seats].sort()) !== JSON.stringify([...ids].sort()))
    problems.push(`continues.seats [${c.seats.join(", ")}] are not this run's participants [${ids.join(", ")}]`);
  return problems;
}

function earlierProblems(b: RunBundle, bytes: Uint8Array): string[] {
  const c = b.continues!;
  const digest = sha256Hex(bytes);
  if (digest !== c.runJsonSha256)
    return [`run ${c.runId}'s run.json has SHA-256 ${digest.slice(0, 12)}…, not the ${c.runJsonSha256.slice(0, 12)}… this run continued`];
  let earlier: RunBundle;
  try {
    const r = RunBundleSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!r.success) return [`run ${c.runId}'s run.json is not a run bundle`];
    earlier = r.data;
  } catch {
    return [`run ${c.runId}'s run.json is not valid JSON`];
  }
  const problems: string[] = [];
  if (earlier.runId !== c.runId) problems.push(`run ${c.runId}'s run.json names run ${earlier.runId}`);
  if (earlier.lab.id !== b.lab.id) problems.push(`run ${c.runId} is of lab ${earlier.lab.id}, this run of lab ${b.lab.id}`);
  if (earlier.mode !== "live") problems.push(`run ${c.runId} is a ${earlier.mode} run`);
  const had = new Set(earlier.participants.map((p) => p.id));
  const missing = c.seats.filter((s) => !had.has(s));
  if (missing.length) problems.push(`run ${c.runId} had no seat ${missing.join(", ")}`);
  return problems;
}

export function continuedRun(ctx: VerifyContext): CheckOutcome {
  const b = ctx.bundle;
  if (!b) return { problems: ["no valid bundle"], ok: "" };
  const c = b.continues;
  if (!c) return { problems: [], ok: "continues no earlier run" };
  const problems = shapeProblems(b);
  const found = ctx.continued?.runId === c.runId ? ctx.continued : undefined;
  if (!found?.bytes) {
    ctx.warnings.push(`this run continues ${c.runId}, which is not beside it: the link's digest was not checked (verify the two side by side)`);
    return { problems, ok: `continues ${c.runId} (${c.which}: ${c.seats.join(", ")}); that run is not here, so only the link's shape was checked` };
  }
  problems.push(...earlierProblems(b, found.bytes));
  return { problems, ok: `continues ${c.runId} (${c.which}: ${c.seats.join(", ")}); its run.json matches the recorded SHA-256` };
}
