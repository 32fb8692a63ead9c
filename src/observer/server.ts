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
 */
import { admitPngBytes } from "../bundle/png.ts";
import { HumanishError } from "../errors.ts";
import { readContainedFile } from "../report/files.ts";
import { REPORT_CSP } from "../report/html.ts";
import { foreignRequest } from "../report/origin.ts";
import type { FeedEvent, ObserverFeed } from "./feed.ts";
import { OBSERVER_CSP, observerPageHtml } from "./page.ts";

/** Keep-alive comment period on an open event stream, ms. */
export const PING_MS = 5000;
/** Largest frame served, bytes. */
const MAX_FRAME_BYTES = 32 * 1024 * 1024;
/** Largest report served, bytes. */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;
/** A frame name: what the lanes write (`NN-label`). */
const FRAME_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

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

const HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
};

function respond(status: number, body: string | Uint8Array | null, type = "text/plain; charset=utf-8", csp = OBSERVER_CSP): Response {
  return new Response(body, { status, headers: { ...HEADERS, "content-security-policy": csp, "content-type": type } });
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

function sse(e: FeedEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/**
 * Binds and starts the Observer (see module doc).
 * @throws HumanishError HUMANISH_PORT_IN_USE when the port is taken, HUMANISH_INVALID_PORT
 */
export function startObserverServer(o: ObserverServerOptions): ObserverServer {
  const port = checkObserverPort(o.port);
  let bound = 0;
  const streams = new Set<() => void>();
  const guard =
    (h: (req: Request, params: Record<string, string>) => Response | Promise<Response>) =>
    (req: Request & { params?: Record<string, string> }): Response | Promise<Response> => {
      if (foreignRequest(req, bound) !== null) return respond(421, "misdirected request: this server answers only its loopback origin\n");
      if (req.method !== "GET") return respond(405, "method not allowed: the Observer is read-only\n");
      return h(req, req.params ?? {});
    };

  const events = (req: Request): Response => {
    const raw = req.headers.get("last-event-id");
    const last = raw !== null && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : null;
    let cleanup = () => {};
    const body = new ReadableStream<string>({
      start(controller) {
        const send = (chunk: string) => {
          try {
            controller.enqueue(chunk);
          } catch {
            cleanup();
          }
        };
        send("retry: 1000\n\n");
        // Catch-up and subscription happen in one turn of the event loop: the feed publishes
        // synchronously, so no event can fall between them or come twice.
        const replay = last === null ? null : o.feed.since(last);
        if (replay === null) {
          const snap = o.feed.snapshot();
          send(sse({ id: snap.id, type: "snapshot", data: snap.view }));
        } else for (const e of replay) send(sse(e));
        const unsubscribe = o.feed.subscribe((e) => send(sse(e)));
        const ping = setInterval(() => send(": ping\n\n"), PING_MS);
        cleanup = () => {
          unsubscribe();
          clearInterval(ping);
          streams.delete(close);
        };
        const close = () => {
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.add(close);
        req.signal.addEventListener("abort", cleanup, { once: true });
      },
      cancel() {
        cleanup();
      },
    });
    return new Response(body, {
      headers: { ...HEADERS, "content-security-policy": OBSERVER_CSP, "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" },
    });
  };

  const frame = async (_req: Request, params: Record<string, string>): Promise<Response> => {
    const seat = params.seat ?? "";
    const file = params.file ?? "";
    const name = file.endsWith(".png") ? file.slice(0, -".png".length) : "";
    if (!FRAME_NAME.test(name) || !FRAME_NAME.test(seat)) return respond(404, "not found\n");
    const rel = o.feed.framePath(seat, name);
    if (!rel) return respond(404, "no such frame\n");
    const read = readContainedFile(o.runDir, rel, MAX_FRAME_BYTES);
    if (!read.ok) return respond(read.reason === "not_found" ? 404 : 403, `frame refused (${read.reason.replace(/_/g, " ")})\n`);
    const admitted = await admitPngBytes(read.bytes);
    if (!admitted.ok) return respond(403, `frame refused by the PNG gate (${admitted.code})\n`);
    return respond(200, read.bytes, "image/png");
  };

  const report = (): Response => {
    if (!o.feed.snapshot().view.study.report) return respond(404, "the report is written when the run is sealed\n");
    const read = readContainedFile(o.runDir, "report/index.html", MAX_REPORT_BYTES);
    if (!read.ok) return respond(read.reason === "not_found" ? 404 : 403, `report refused (${read.reason.replace(/_/g, " ")})\n`);
    return respond(200, read.bytes, "text/html; charset=utf-8", `${REPORT_CSP}; frame-ancestors 'none'`);
  };

  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port,
      // Event streams stay open for the whole study; the pings keep them under this bound.
      idleTimeout: 30,
      routes: {
        "/": guard(() => respond(200, observerPageHtml(), "text/html; charset=utf-8")),
        "/events": guard(events),
        "/frames/:seat/:file": guard(frame),
        "/report": guard(report),
      },
      fetch: guard(() => respond(404, "not found\n")),
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
  bound = server.port!;
  let stopped = false;
  return {
    url: `http://127.0.0.1:${bound}/`,
    port: bound,
    connections: () => streams.size,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const close of [...streams]) close();
      await server.stop(true);
    },
  };
}
