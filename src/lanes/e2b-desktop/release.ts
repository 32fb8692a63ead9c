/**
 * Releasing an E2B desktop by its exact sandbox id, with proof.
 *
 * Two calls, each under an outer deadline so a hung API cannot hold the seat: `Sandbox.kill(id)`
 * (true: the API killed it; false: the API answered 404) and then `Sandbox.getInfo(id)`, which
 * must say "not found". The verdict is {@link releaseVerdict} (pure):
 *
 *   kill true  + getInfo not-found           → released (kill-true+getinfo-404)
 *   kill false + getInfo not-found or failed → released with a warning: it was already absent,
 *                                              so its exact end time is unknown
 *   getInfo answers with the sandbox         → unconfirmed (still there after the kill)
 *   kill threw or outlived its deadline      → unconfirmed
 *   kill true + getInfo failed otherwise     → unconfirmed
 *
 * A retained desktop (an explicit debug flag) is never killed: its outcome is `retained` and E2B's
 * own timeout (`onTimeout: kill`) still ends it. The account is never listed; nothing is matched
 * by name or metadata.
 */
import { Sandbox, SandboxNotFoundError } from "@e2b/desktop";
import type { ReleaseProof } from "../../sandbox/types.ts";

/** What one step of the release observed. */
export type KillStep = { kind: "value"; value: boolean } | { kind: "error"; message: string } | { kind: "deadline"; ms: number };
export type InfoStep = { kind: "alive"; state: string } | { kind: "not_found" } | { kind: "error"; message: string } | { kind: "deadline"; ms: number };

/** The release's outcome, its reason and any warning. */
export interface ReleaseVerdict {
  outcome: "released" | "unconfirmed";
  reason: string;
  warning?: string;
}

/** The proof rule above, as a pure function of the two steps. */
export function releaseVerdict(kill: KillStep, info: InfoStep): ReleaseVerdict {
  const killNote =
    kill.kind === "value"
      ? kill.value
        ? "kill answered true"
        : "kill answered 404"
      : kill.kind === "deadline"
        ? `kill did not settle within ${kill.ms} ms`
        : `kill failed (${kill.message})`;
  if (info.kind === "alive") return { outcome: "unconfirmed", reason: `${killNote}; getInfo still shows the sandbox (${info.state})` };
  if (kill.kind !== "value") return { outcome: "unconfirmed", reason: `${killNote}; ${infoNote(info)}` };
  if (kill.value) {
    return info.kind === "not_found"
      ? { outcome: "released", reason: "kill-true+getinfo-404" }
      : { outcome: "unconfirmed", reason: `${killNote}; ${infoNote(info)}` };
  }
  return {
    outcome: "released",
    reason: info.kind === "not_found" ? "kill-404+getinfo-404" : `kill-404; ${infoNote(info)}`,
    warning: "the sandbox was already absent when released: its exact end time is unknown",
  };
}

function infoNote(info: InfoStep): string {
  switch (info.kind) {
    case "not_found":
      return "getInfo answered not found";
    case "deadline":
      return `getInfo did not settle within ${info.ms} ms`;
    case "error":
      return `getInfo failed (${info.message})`;
    default:
      return `getInfo shows ${info.state}`;
  }
}

/** Connection options of the two static SDK calls (no secret is ever logged from here). */
export interface ReleaseConnection {
  apiKey: string;
  apiUrl?: string;
  domain?: string;
}

/** Outer deadlines of the two release steps, ms. */
export interface ReleaseDeadlines {
  killMs?: number;
  infoMs?: number;
}

async function settle<T>(
  p: Promise<T>,
  ms: number,
): Promise<{ kind: "value"; value: T } | { kind: "error"; error: unknown } | { kind: "deadline"; ms: number }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<{ kind: "deadline"; ms: number }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "deadline", ms }), ms);
  });
  try {
    return await Promise.race([
      p.then((value) => ({ kind: "value" as const, value })).catch((error: unknown) => ({ kind: "error" as const, error })),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error's class and message, without anything the SDK may have echoed from a request body. */
function describe(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message.slice(0, 200)}`;
  return String(e).slice(0, 200);
}

/** Only the SDK's own "sandbox not found" (its getInfo maps an API 404 to it) counts as gone. */
function isNotFound(e: unknown): boolean {
  return e instanceof SandboxNotFoundError;
}

/**
 * Kill sandbox `id` and confirm it is gone (see the module comment). Never throws.
 * The `network` field of `SandboxInfo` is never read: it can echo a rule's header values.
 */
export async function releaseDesktop(id: string, conn: ReleaseConnection, deadlines: ReleaseDeadlines = {}): Promise<ReleaseProof & { warning?: string }> {
  const at = new Date().toISOString();
  const killMs = deadlines.killMs ?? 60_000;
  const infoMs = deadlines.infoMs ?? 20_000;
  const opts = { ...conn, debug: false, requestTimeoutMs: killMs };
  const k = await settle(Sandbox.kill(id, opts), killMs + 1000);
  const kill: KillStep =
    k.kind === "value"
      ? { kind: "value", value: k.value === true }
      : k.kind === "deadline"
        ? { kind: "deadline", ms: killMs }
        : { kind: "error", message: describe(k.error) };
  const i = await settle(Sandbox.getInfo(id, { ...opts, requestTimeoutMs: infoMs }), infoMs + 1000);
  const info: InfoStep =
    i.kind === "value"
      ? { kind: "alive", state: typeof i.value.state === "string" ? i.value.state : "unknown state" }
      : i.kind === "deadline"
        ? { kind: "deadline", ms: infoMs }
        : isNotFound(i.error)
          ? { kind: "not_found" }
          : { kind: "error", message: describe(i.error) };
  const v = releaseVerdict(kill, info);
  return { id, provider: "e2b", kind: "desktop", outcome: v.outcome, reason: v.reason, at, ...(v.warning ? { warning: v.warning } : {}) };
}
