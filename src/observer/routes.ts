/**
 * The Observer's routes (served by ./server.ts, which documents them), each a function of the
 * one {@link ObserverState} a server keeps: the origin guard every request passes first, the
 * page, the event stream, a seat's frame and the sealed report. Every response carries the
 * same security headers and, unless it is the report, the page's CSP.
 */
import { admitPngBytes } from "../bundle/png.ts";
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

const HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
};

/** What one Observer server keeps; every route takes it. */
export interface ObserverState {
  readonly feed: ObserverFeed;
  /** Absolute run directory (frames and the report are read from it). */
  readonly runDir: string;
  /** The closer of every open event stream. */
  readonly streams: Set<() => void>;
  /** The port bound (0 until the server listens): a request must name this loopback origin. */
  bound: number;
}

/** A route's handler: the request and its path parameters. */
type Handler = (req: Request, params: Record<string, string>) => Response | Promise<Response>;

/** A response with the Observer's headers. */
export function respond(status: number, body: string | Uint8Array | null, type = "text/plain; charset=utf-8", csp = OBSERVER_CSP): Response {
  return new Response(body, { status, headers: { ...HEADERS, "content-security-policy": csp, "content-type": type } });
}

/** `Bun.serve`'s `routes` and its `fetch` fallback (404), every one behind {@link guard}. */
export function observerRoutes(s: ObserverState) {
  return {
    routes: {
      "/": guard(s, () => respond(200, observerPageHtml(), "text/html; charset=utf-8")),
      "/events": guard(s, (req) => eventsRoute(s, req)),
      "/frames/:seat/:file": guard(s, (_req, params) => frameRoute(s, params)),
      "/report": guard(s, () => reportRoute(s)),
    },
    fetch: guard(s, () => respond(404, "not found\n")),
  };
}

/** Wraps `h`: a request from a foreign Host or Origin gets 421, any method but GET 405. */
function guard(s: ObserverState, h: Handler) {
  return (req: Request & { params?: Record<string, string> }): Response | Promise<Response> => {
    if (foreignRequest(req, s.bound) !== null) return respond(421, "misdirected request: this server answers only its loopback origin\n");
    if (req.method !== "GET") return respond(405, "method not allowed: the Observer is read-only\n");
    return h(req, req.params ?? {});
  };
}

/** One event in server-sent-event form, with its `id:`. */
function sse(e: FeedEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** `GET /events`: the server-sent event stream, resumed after the request's `Last-Event-ID` when it is valid. */
function eventsRoute(s: ObserverState, req: Request): Response {
  const raw = req.headers.get("last-event-id");
  const last = raw !== null && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : null;
  let cleanup = () => {};
  const body = new ReadableStream<string>({
    start(controller) {
      cleanup = openEventStream(s, controller, last, req.signal);
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(body, {
    headers: { ...HEADERS, "content-security-policy": OBSERVER_CSP, "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" },
  });
}

/**
 * Starts one stream on `controller`: the events after `last` (or a snapshot when the log no
 * longer holds them, or `last` is null), then every new event and a ping every {@link PING_MS}.
 * Registers its closer in `s.streams`; returns its cleanup (also run when `signal` aborts or a
 * write fails).
 */
function openEventStream(s: ObserverState, controller: ReadableStreamDefaultController<string>, last: number | null, signal: AbortSignal): () => void {
  let cleanup = () => {};
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
  const replay = last === null ? null : s.feed.since(last);
  if (replay === null) {
    const snap = s.feed.snapshot();
    send(sse({ id: snap.id, type: "snapshot", data: snap.view }));
  } else for (const e of replay) send(sse(e));
  const unsubscribe = s.feed.subscribe((e) => send(sse(e)));
  const ping = setInterval(() => send(": ping\n\n"), PING_MS);
  cleanup = () => {
    unsubscribe();
    clearInterval(ping);
    s.streams.delete(close);
  };
  const close = () => {
    cleanup();
    try {
      controller.close();
    } catch {
      // already closed by the client
    }
  };
  s.streams.add(close);
  signal.addEventListener("abort", cleanup, { once: true });
  return cleanup;
}

/** `GET /frames/<seat>/<name>.png`: a seat's frame as last scanned, read contained and admitted by the PNG gate. */
async function frameRoute(s: ObserverState, params: Record<string, string>): Promise<Response> {
  const seat = params.seat ?? "";
  const file = params.file ?? "";
  const name = file.endsWith(".png") ? file.slice(0, -".png".length) : "";
  if (!FRAME_NAME.test(name) || !FRAME_NAME.test(seat)) return respond(404, "not found\n");
  const rel = s.feed.framePath(seat, name);
  if (!rel) return respond(404, "no such frame\n");
  const read = readContainedFile(s.runDir, rel, MAX_FRAME_BYTES);
  if (!read.ok) return respond(read.reason === "not_found" ? 404 : 403, `frame refused (${read.reason.replace(/_/g, " ")})\n`);
  const admitted = await admitPngBytes(read.bytes);
  if (!admitted.ok) return respond(403, `frame refused by the PNG gate (${admitted.code})\n`);
  return respond(200, read.bytes, "image/png");
}

/** `GET /report`: the sealed run's `report/index.html` under the report's CSP, 404 until the run is sealed. */
function reportRoute(s: ObserverState): Response {
  if (!s.feed.snapshot().view.study.report) return respond(404, "the report is written when the run is sealed\n");
  const read = readContainedFile(s.runDir, "report/index.html", MAX_REPORT_BYTES);
  if (!read.ok) return respond(read.reason === "not_found" ? 404 : 403, `report refused (${read.reason.replace(/_/g, " ")})\n`);
  return respond(200, read.bytes, "text/html; charset=utf-8", `${REPORT_CSP}; frame-ancestors 'none'`);
}
