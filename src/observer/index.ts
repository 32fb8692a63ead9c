/**
 * The Observer: a live page on 127.0.0.1 showing every seat of a running study (phase,
 * elapsed, latest admitted frame or last terminal lines, spend against its cap, tasks checked)
 * and the running denominator, fed from the run directory (./scan.ts, ./feed.ts) and served by
 * ./server.ts. `lab run --watch` starts one before its study; `humanish watch [RUN]` starts one
 * on a run directory written by another process.
 */
import { createRedactor } from "../bundle/redact.ts";
import { expandSeats, type LabConfig } from "../lab/index.ts";
import type { ProgressEvent } from "../study/context.ts";
import { createObserverFeed, type ObserverFeed } from "./feed.ts";
import { type ObserverServer, startObserverServer } from "./server.ts";
import type { ObserverPlan } from "./view.ts";

export { checkObserverPort } from "./server.ts";
export type { ObserverPlan, ObserverView, SeatView, StudyView } from "./view.ts";

/** Options of {@link startObserver}. */
export interface StartObserverOptions {
  runId: string;
  /** Absolute run directory (need not exist yet). */
  runDir: string;
  /** Absolute project directory (local paths under it are labelled, as in the bundle). */
  cwd: string;
  /** Secret values of this invocation: scrubbed from every text shown (the bundle's redactor). */
  secrets: readonly string[];
  plan: ObserverPlan | null;
  /** 0 = any free port. */
  port: number;
}

/** A running Observer. */
export interface Observer {
  url: string;
  port: number;
  feed: ObserverFeed;
  server: ObserverServer;
  /** The study's progress sink (in-process studies). */
  progress(e: ProgressEvent): void;
  /** Stops the server and the watcher. Idempotent. */
  stop(): Promise<void>;
}

/** The Observer's plan of a lab: its seats, caps (USD) and the number of hidden tasks per seat. */
export function observerPlanOf(lab: LabConfig): ObserverPlan {
  const actor = lab.actors[0] as { tasks?: readonly unknown[] } & Parameters<typeof expandSeats>[0];
  const caps = (lab.scenario as { caps?: { maxUsd?: number; maxTotalUsd?: number } } | undefined)?.caps;
  return {
    seats: expandSeats(actor).map((s) => s.id),
    capUsdPerSeat: caps?.maxUsd ?? null,
    capTotalUsd: caps?.maxTotalUsd ?? null,
    tasksPerSeat: actor.tasks?.length ?? 0,
  };
}

/**
 * Starts watching and binds the server; a port in use stops the watcher again and throws, so the
 * caller can refuse to start its study.
 * @throws HumanishError HUMANISH_PORT_IN_USE, HUMANISH_INVALID_PORT
 */
export function startObserver(o: StartObserverOptions): Observer {
  const redactor = createRedactor(o.secrets, { cwd: o.cwd });
  const redact = (s: string) => redactor.text(s);
  const feed = createObserverFeed({ runId: o.runId, runDir: o.runDir, plan: o.plan, redact });
  let server: ObserverServer;
  try {
    server = startObserverServer({ feed, runDir: o.runDir, port: o.port });
  } catch (e) {
    feed.close();
    throw e;
  }
  return {
    url: server.url,
    port: server.port,
    feed,
    server,
    progress: (e) => feed.progress(e),
    async stop() {
      feed.close();
      await server.stop();
    },
  };
}
