/**
 * Injected faults of the local E2B-compatible server: the failure modes of E2B's control plane
 * that a lane must survive with an honest cleanup outcome. Pure state and decisions, no I/O; the
 * control plane asks `controlPlaneFault` before routing each request.
 */

/**
 * How `DELETE /sandboxes/{id}` behaves:
 * - `normal`: kill the container for real, confirm it is gone, answer 204 (404 when absent);
 * - `ack-but-alive`: answer 204 and leave the sandbox running (a kill the API acknowledged but
 *   never carried out — `getInfo` still shows it running, so the caller can only say `unconfirmed`);
 * - `404-but-alive`: answer 404 while the sandbox is still running (the SDK's `kill` returns
 *   `false`, "already gone", yet `getInfo` still lists it);
 * - `hang`: never answer (until the server closes), so only the caller's outer deadline ends it.
 */
export type KillFault = "normal" | "ack-but-alive" | "404-but-alive" | "hang";

/** A fault that answers the next `times` control-plane requests matching `route` instead of serving them. */
export interface CountedFault {
  /** How many of the next matching requests it answers (decremented on each). */
  times: number;
  /** `"<METHOD> <path pattern>"`, e.g. `POST /v2/sandboxes` or `GET /sandboxes/*`; all routes when absent. */
  route?: string;
}

/** The mutable fault switchboard of one server (`server.faults`). */
export interface E2BFaults {
  /** Behaviour of `DELETE /sandboxes/{id}` (default `normal`). */
  kill: KillFault;
  /** When set, matching control-plane requests answer 401 `{code:401,message}` (the SDK throws `AuthenticationError`). */
  unauthorized: CountedFault | undefined;
  /**
   * When set, matching control-plane requests answer 429 with a `Retry-After` header of
   * `retryAfterSeconds` (default 1). The SDK retries a 429 that carries `Retry-After` while the
   * wait fits its request deadline, so `times` larger than its retries surfaces as `RateLimitError`.
   */
  rateLimited: (CountedFault & { retryAfterSeconds?: number }) | undefined;
  /** Puts every fault back to normal. */
  reset(): void;
}

/** A new switchboard with every fault off. */
export function createFaults(): E2BFaults {
  const faults: E2BFaults = {
    kill: "normal",
    unauthorized: undefined,
    rateLimited: undefined,
    reset() {
      faults.kill = "normal";
      faults.unauthorized = undefined;
      faults.rateLimited = undefined;
    },
  };
  return faults;
}

/** True when `call` (`"<METHOD> <path>"`) matches `route` (`*` matches one path segment). */
export function routeMatches(route: string | undefined, call: string): boolean {
  if (route === undefined) return true;
  const pattern = new RegExp(`^${route.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]+")}$`);
  return pattern.test(call);
}

/** What a counted fault makes the server answer instead of the real route. */
export type FaultAnswer = { status: 401; message: string } | { status: 429; message: string; retryAfterSeconds: number } | undefined;

/**
 * Consumes one use of the first armed fault matching `call` and says what to answer, or undefined
 * to serve the request normally. 401 wins over 429 when both match.
 */
export function controlPlaneFault(faults: E2BFaults, call: string): FaultAnswer {
  const u = faults.unauthorized;
  if (u && u.times > 0 && routeMatches(u.route, call)) {
    u.times -= 1;
    return { status: 401, message: "Invalid API key (injected fault)" };
  }
  const r = faults.rateLimited;
  if (r && r.times > 0 && routeMatches(r.route, call)) {
    r.times -= 1;
    return { status: 429, message: "Rate limit exceeded (injected fault)", retryAfterSeconds: r.retryAfterSeconds ?? 1 };
  }
  return undefined;
}
