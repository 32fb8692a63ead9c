/**
 * Releasing an E2B desktop by its exact sandbox id, with proof, by the release rule both E2B
 * lanes share (`sandbox/e2b-release.ts`): `Sandbox.kill(id)` and then `Sandbox.getInfo(id)`,
 * each under an outer deadline so a hung API cannot hold the seat; only getInfo's "not found"
 * after a kill that answered proves the desktop gone. This file only runs the two calls with
 * `@e2b/desktop`'s SDK.
 *
 * A retained desktop (an explicit debug flag) is never killed: its outcome is `retained` and E2B's
 * own timeout (`onTimeout: kill`) still ends it. The account is never listed; nothing is matched
 * by name or metadata.
 */
import { Sandbox, SandboxNotFoundError } from "@e2b/desktop";
import { type E2BAlive, e2bReleaseStep, e2bReleaseVerdict } from "../../sandbox/e2b-release.ts";
import type { ReleaseProof } from "../../sandbox/types.ts";

export { e2bReleaseVerdict as releaseVerdict } from "../../sandbox/e2b-release.ts";

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
  const kill = await e2bReleaseStep(
    Sandbox.kill(id, opts).then((v) => v === true),
    killMs + 1000,
    isNotFound,
  );
  // The lookup runs even after a kill that did not settle: a desktop found alive is named in the reason.
  const lookup = await e2bReleaseStep(
    Sandbox.getInfo(id, { ...opts, requestTimeoutMs: infoMs }).then((i): E2BAlive => (typeof i.state === "string" ? { state: i.state } : {})),
    infoMs + 1000,
    isNotFound,
  );
  const v = e2bReleaseVerdict(kill, lookup);
  return { id, provider: "e2b", kind: "desktop", outcome: v.outcome, reason: v.reason, at, ...(v.warning ? { warning: v.warning } : {}) };
}
