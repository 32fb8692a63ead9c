/**
 * The dry-run lane: every seat goes through the runner's lifecycle with nothing
 * created, started, read or spent, and ends as `contract_proof_only` with its tasks `not_run`.
 * The bundle then proves the plan (one participant per declared seat) without any engine.
 */
import type { RunParticipant, TaskResult } from "../../bundle/schemas.ts";
import { evidenceSummary, type SeatEvidence } from "../../study/evidence.ts";
import type { Lane, SeatSpec } from "../../study/types.ts";

export interface DryRunLaneOptions {
  actorType: string;
  /** The participant label of a seat (default: the actor type). */
  label?: (seat: SeatSpec) => string;
  /** Extra participant fields of a seat (e.g. a browser seat's device). */
  extra?: (seat: SeatSpec) => Partial<RunParticipant>;
  tasks: readonly { id: string; goal: string }[];
}

/** The dry-run lane. */
export function dryRunLane(o: DryRunLaneOptions): Lane<SeatEvidence<null>> {
  return {
    name: "dry-run",
    spentUsd: () => 0,
    jobs: () => 0,
    summary: evidenceSummary,
    session(seat, hooks) {
      const noop = async () => undefined;
      return {
        prepare: noop,
        openSession: noop,
        participate: noop,
        check: noop,
        async finalize() {
          hooks.progress("teardown", "dry run: nothing was created");
          return { outcome: "none", reason: "dry run: nothing was created" };
        },
        snapshot(): SeatEvidence<null> {
          const tasks: TaskResult[] = o.tasks.map((t) => ({
            id: t.id,
            goal: t.goal,
            participantId: seat.id,
            status: "not_run",
            passed: false,
            detail: "dry run: not checked",
          }));
          return {
            participant: {
              id: seat.id,
              actorType: o.actorType,
              label: o.label?.(seat) ?? o.actorType,
              status: "contract_proof_only",
              completionReason: null,
              reason: "dry run: contract only",
              trace: null,
              ...(seat.persona ? { persona: seat.persona } : {}),
              ...(o.extra?.(seat) ?? {}),
            },
            tasks,
            cleanup: [],
            costLines: [],
            lifecycle: [],
            folder: null,
            usd: 0,
            jobs: 0,
            lane: null,
          };
        },
      };
    },
  };
}
