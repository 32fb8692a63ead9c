/**
 * The example lab's product adapter. humanish imports this file at run time (no build step)
 * and calls each exported hook with the frozen, redacted scoring context of the run.
 *
 * The types come from `humanish types --out humanish.d.ts` (the file beside this one), so the
 * adapter type-checks without a humanish checkout: `tsc --noEmit --strict --target es2022 --module nodenext scorer.ts`
 * (the target gives `flatMap`; the module setting reads the `.d.ts` import).
 */
import type { DeepReadonly, DeriveArtifactsHook, DeriveFeedbackHook, ScoreHook, ScoreResult, ScoringParticipant, TraceItem } from "./humanish";

/** Every noun of this product lives under this namespace. */
const NAMESPACE = "example.wc";

/** The participant's commands that exited non-zero, with their step titles. */
function failedCommands(items: readonly DeepReadonly<TraceItem>[] | undefined): { title: string; exitCode: number }[] {
  return (items ?? [])
    .filter((i) => i.kind === "command" && typeof i.command?.exitCode === "number" && i.command.exitCode !== 0)
    .map((i) => ({ title: i.title, exitCode: i.command?.exitCode ?? 0 }));
}

/** The bundle path of a participant's file of one kind (transcript, trace), if the bundle lists it. */
function fileOf(p: Pick<ScoringParticipant, "folder">, name: string, listed: readonly { path: string }[]): string | undefined {
  const path = `${p.folder ?? ""}${name}`;
  return listed.some((a) => a.path === path) ? path : undefined;
}

/**
 * 100 per passed task share, minus 10 per command that failed; fail when any task failed. A run
 * that did not complete (a harness failure) says nothing about the product: it is left unjudged
 * as `partial` 0, so it adds no product `fail` on top of the harness failure.
 */
export const score: ScoreHook = (ctx): ScoreResult => {
  if (ctx.bundle.outcome.state !== "completed") {
    return {
      namespace: NAMESPACE,
      status: "partial",
      score: 0,
      summary: `not judged: the run ${ctx.bundle.outcome.state} before the product could be scored`,
      data: { judged: false },
    };
  }
  const tasks = ctx.participants.flatMap((p) => p.tasks);
  const passed = tasks.filter((t) => t.passed).length;
  const failed = ctx.participants.flatMap((p) => failedCommands(p.trace?.items));
  const share = tasks.length === 0 ? 0 : Math.round((100 * passed) / tasks.length);
  return {
    namespace: NAMESPACE,
    status: passed < tasks.length || tasks.length === 0 ? "fail" : failed.length > 0 ? "partial" : "pass",
    score: Math.max(0, share - 10 * failed.length),
    summary: `${passed}/${tasks.length} task(s) passed; ${failed.length} command(s) exited non-zero`,
    data: { tasksPassed: passed, tasksTotal: tasks.length, failedCommands: failed.length },
  };
};

/** One candidate per command that failed: the newcomer expected it to work. */
export const deriveFeedback: DeriveFeedbackHook = (ctx) =>
  ctx.participants.flatMap((p) =>
    failedCommands(p.trace?.items).map((c, i) => {
      const transcript = fileOf(p, "terminal-transcript.txt", ctx.bundle.artifacts);
      return {
        id: `${p.id}-failed-command-${i + 1}`,
        participant_id: p.id,
        failure_owner: "target-app" as const,
        summary: `${c.title} exited ${c.exitCode}`,
        expected: "the command a newcomer guessed from the help text works",
        actual: `it exited ${c.exitCode}`,
        evidence: [
          ...(p.trace ? [{ path: `${p.folder ?? ""}actor.json`, kind: "trace" as const, note: c.title }] : []),
          ...(transcript ? [{ path: transcript, kind: "log" as const, note: "the command's output" }] : []),
        ],
        idempotency_key: `${ctx.labId}:${c.title}`,
        proposed_next_state: "watch" as const,
        adapter: { namespace: NAMESPACE, data: { exitCode: c.exitCode } },
      };
    }),
  );

/** A per-participant summary of the commands run, as one JSON file. */
export const deriveArtifacts: DeriveArtifactsHook = (ctx) => [
  {
    namespace: NAMESPACE,
    label: "command summary",
    path: "summary.json",
    kind: "summary",
    note: "commands run and their exit codes, per participant",
    content: {
      product: ctx.product.name ?? null,
      participants: ctx.participants.map((p) => ({
        id: p.id,
        status: p.status,
        commands: (p.trace?.items ?? []).filter((i) => i.kind === "command").map((i) => ({ title: i.title, exitCode: i.command?.exitCode ?? null })),
      })),
    },
  },
];
