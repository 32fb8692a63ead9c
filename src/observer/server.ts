/**
 * The Observer server: `Bun.serve` on 127.0.0.1 only, read-only, with four routes:
 * - `GET /` — the page (./page.ts);
 * - `GET /events` — server-sent events from the feed (./feed.ts): on connect, the events after
 *   the page's `Last-Event-ID` when the log still holds them, otherwise one `snapshot`; then
 *   every new event, each with its `id:`. A comment line every {@link PING_MS} keeps the
 *   connection open;
 * - `GET /frames/<seat>/<name>.png` — a seat's admitted frame, read through the bundle's
 *   contained safe reader and admitted again by the PNG gate before a byte is served;
 * - `GET /report` — the run's `report/index.html` once the run is sealed, with the report's CSP.
 * Every request whose Host or Origin is not this server's own loopback address:port is refused
 * (421) before any route runs (the shared rule of ../report/origin.ts); other methods get 405.
 * The routes are in ./routes.ts; this file validates the port and binds them.
 */
import { HumanishError } from "../errors.ts";
import type { ObserverFeed } from "./feed.ts";
import { type ObserverState, observerRoutes, respond } from "./routes.ts";

export { PING_MS } from "./routes.ts";

/** Options of {@link startObserverServer}. */
export interface ObserverServerOptions {
  feed: ObserverFeed;
  /** Absolute run directory (frames and the report are read from it). */
  runDir: string;
  /** TCP port; 0 picks a free one. */
  port: number;
}

/** A running Observer. */
export interface ObserverServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  port: number;
  /** Open event streams right now. */
  connections(): number;
  /** Stops listening and closes every stream. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Validates a port (whole number 0–65535).
 * @throws HumanishError HUMANISH_INVALID_PORT
 */
export function checkObserverPort(raw: string | number): number {
  const p = typeof raw === "number" ? raw : /^[0-9]{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(p) || p < 0 || p > 65535) {
    throw new HumanishError("HUMANISH_INVALID_PORT", `--watch takes a port, a whole number 0–65535; got ${JSON.stringify(String(raw).slice(0, 40))}.`, {
      next: "pass --watch alone (any free port) or --watch 8765",
    });
  }
  return p;
}

/**
 * Binds and starts the Observer (see module doc).
 * @throws HumanishError HUMANISH_PORT_IN_USE when the port is taken, HUMANISH_INVALID_PORT
 */
export function startObserverServer(o: ObserverServerOptions): ObserverServer {
  const port = checkObserverPort(o.port);
  const s: ObserverState = { feed: o.feed, runDir: o.runDir, streams: new Set(), bound: 0 };
  const server = listen(s, port);
  s.bound = server.port!;
  let stopped = false;
  return {
    url: `http://127.0.0.1:${s.bound}/`,
    port: s.bound,
    connections: () => s.streams.size,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const close of [...s.streams]) close();
      await server.stop(true);
    },
  };
}

/**
 * `Bun.serve` on 127.0.0.1:`port` with the Observer's routes.
 * @throws HumanishError HUMANISH_PORT_IN_USE when the port is taken
 */
function listen(s: ObserverState, port: number): ReturnType<typeof Bun.serve> {
  const { routes, fetch } = observerRoutes(s);
  try {
    return Bun.serve({
      hostname: "127.0.0.1",
      port,
      // Event streams stay open for the whole study; the pings keep them under this bound.
      idleTimeout: 30,
      routes,
      fetch,
      error: () => respond(500, "HUMANISH_UNEXPECTED: internal error\n"),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || /in use/i.test((err as Error).message)) {
      throw new HumanishError("HUMANISH_PORT_IN_USE", `--watch ${port}: port ${port} on 127.0.0.1 is already in use; the study was not started.`, {
        next: "pass --watch without a port (any free port), or another port",
      });
    }
    throw err;
  }
}
