/**
 * The run library server (`humanish serve`).
 *
 * `Bun.serve` bound to 127.0.0.1 only, read-only, with exactly four kinds of route:
 * - `GET /` — the index of every run, newest first (`listRuns`), each with its verify state.
 * - `GET /runs/<id>/` (also `/runs/<id>` and `/runs/<id>/report/index.html`) — the run's report,
 *   only once the bundle verifies on this request (see `served.ts`): the listed
 *   `report/index.html` when it exists, otherwise rendered in memory (nothing is written); a
 *   `local_only` bundle's page carries a banner saying so; a bundle that does not verify gets
 *   a page (409) saying why instead of its report.
 * - `GET /runs/<id>/<path>.png` — a screenshot the report links instead of inlining: only one
 *   `run.json` lists as a screenshot, of a bundle that verifies on this request, with the listed
 *   SHA-256 (run.json itself and every other file stay unserved).
 * - anything else — 404.
 *
 * Refusals: any bind address other than 127.0.0.1/localhost (`HUMANISH_SERVE_NON_LOOPBACK`,
 * before anything listens); a Host or Origin header that is not this loopback origin (421, defeats
 * DNS rebinding; ./origin.ts); methods other than GET/HEAD (405); a request target with `%`, a backslash, a `..`
 * or `.` segment, or an empty segment (400 — encoded and double-encoded traversal never reach
 * the file system); a run id that is not one safe segment (404); a symlinked or non-directory
 * run, a symlinked/hard-linked/non-regular report file (403). Every file (the index's run.json
 * and status.json included) goes through the bundle's safe reader — regular files only, bounded,
 * opened non-blocking — so no bundle content can stall a request or keep SIGTERM from landing.
 */
import { createHash } from "node:crypto";
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { defaultTrust, isSafeRunSegment, listRuns, RunBundleSchema, runsDir, type TrustSet, verifyRun } from "../bundle/index.ts";
import { HumanishError } from "../errors.ts";
import { readContainedFile } from "./files.ts";
import { REPORT_CSP, renderLibraryIndexHtml, renderReportHtml } from "./html.ts";
import { loadReportModel } from "./load.ts";
import { foreignRequest } from "./origin.ts";
import { localOnlyBanner, refusedReportHtml, servedState, stateClass, withBanner } from "./served.ts";
import { REPORT_PATH } from "./write.ts";

/** Options of {@link startLibraryServer}. */
export interface LibraryServerOptions {
  /** Project directory whose `.humanish/runs/` is served (absolute). */
  cwd: string;
  /** Bind address: only `127.0.0.1` (or `localhost`, bound as 127.0.0.1). Default 127.0.0.1. */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Signers whose bundles are share-ready; default: the local user's own key. */
  trust?: TrustSet;
}

/** A running library server. */
export interface LibraryServer {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  port: number;
  /** Stops listening and closes open connections. Idempotent. */
  stop(): Promise<void>;
}

/** Largest report file served, in bytes. */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": `${REPORT_CSP}; frame-ancestors 'none'`,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
};

function respond(status: number, body: string | Uint8Array, type = "text/plain; charset=utf-8", head = false): Response {
  return new Response(head ? null : body, { status, headers: { ...SECURITY_HEADERS, "content-type": type } });
}

/**
 * The path of the request (query ignored). Bun has already resolved dot segments and turned
 * backslashes into slashes, so a traversal can only land on another served path or on a 404;
 * the checks in the handler refuse whatever is not plain on top of that.
 */
function pathOf(req: Request): string {
  return new URL(req.url).pathname;
}

/** Matches the report's paths; captures the run id. */
const RUN_ROUTE = /^\/runs\/([^/]+)(?:\/|\/report\/index\.html)?$/;
/** Matches a screenshot the report links instead of inlining; captures the run id and the bundle path. */
const SHOT_ROUTE = /^\/runs\/([^/]+)\/(.+\.png)$/;
/** Largest run.json read to find a screenshot's listing, in bytes. */
const MAX_RUN_JSON_BYTES = 32 * 1024 * 1024;
/** Largest screenshot served, in bytes (the recorder's PNG admission bound). */
const MAX_SHOT_BYTES = 12 * 1024 * 1024;

/**
 * The report links the screenshots it does not inline relative to `report/index.html`
 * (`href="../<path>"`, right when the file is opened from the bundle); a served page may sit at
 * `/runs/<id>/` instead, so its links are made absolute. Only our own markup has `href="../`:
 * every untrusted string in the page has its quotes escaped.
 */
function rebaseLinks(html: string, runId: string): string {
  return html.replaceAll('href="../', `href="/runs/${runId}/`);
}

/**
 * A screenshot of a verified run, served only when `run.json` lists it as a screenshot and the
 * bytes read now still have the listed SHA-256 (the file could change after verify read it).
 */
function screenshotResponse(runDir: string, rel: string, head: boolean): Response {
  const manifest = readContainedFile(runDir, "run.json", MAX_RUN_JSON_BYTES);
  const bundle = manifest.ok ? RunBundleSchema.safeParse(JSON.parse(new TextDecoder().decode(manifest.bytes))) : null;
  const listed = bundle?.success ? bundle.data.artifacts.find((a) => a.path === rel && a.kind === "screenshot") : undefined;
  if (!listed) return respond(404, "not found: not a screenshot listed in run.json\n", undefined, head);
  const file = readContainedFile(runDir, rel, MAX_SHOT_BYTES);
  if (!file.ok) return respond(file.reason === "not_found" ? 404 : 403, `refused: the screenshot file is ${file.reason.replace(/_/g, " ")}\n`, undefined, head);
  if (createHash("sha256").update(file.bytes).digest("hex") !== listed.sha256) {
    return respond(409, "refused: the screenshot changed since the bundle was sealed\n", undefined, head);
  }
  return respond(200, file.bytes, "image/png", head);
}

/**
 * Validates the bind address and port.
 * @throws HumanishError HUMANISH_SERVE_NON_LOOPBACK, HUMANISH_INVALID_PORT
 */
export function checkBind(host: string | undefined, port: number | undefined): { hostname: "127.0.0.1"; port: number } {
  const h = host ?? "127.0.0.1";
  if (h !== "127.0.0.1" && h !== "localhost") {
    throw new HumanishError("HUMANISH_SERVE_NON_LOOPBACK", `humanish serve binds 127.0.0.1 only; refusing --host ${JSON.stringify(h.slice(0, 100))}.`, {
      next: "humanish serve --host 127.0.0.1 (reach it from elsewhere through your own authenticated tunnel)",
    });
  }
  const p = port ?? 0;
  if (!Number.isInteger(p) || p < 0 || p > 65535) {
    throw new HumanishError("HUMANISH_INVALID_PORT", `--port must be a whole number 0–65535, got ${String(port)}.`, { next: "humanish serve --port 0" });
  }
  return { hostname: "127.0.0.1", port: p };
}

/** What the request steps share: where the runs are, whom to trust, and the bound port (0 until listening). */
interface LibraryState {
  /** Project directory (absolute). */
  cwd: string;
  /** Its `.humanish/runs/`. */
  root: string;
  trust: TrustSet;
  /** The port the Host/Origin rule expects; set once the server listens. */
  port: number;
}

/**
 * The refusal of a request that is not a plain loopback GET/HEAD of a plain path: 405 for another
 * method, 421 for a foreign Host/Origin, 400 for `%`, a backslash, or a dot or empty segment.
 * Undefined to proceed.
 */
function refuseRequest(req: Request, path: string, port: number, head: boolean): Response | undefined {
  if (req.method !== "GET" && !head) return respond(405, "method not allowed: the run library is read-only\n");
  if (foreignRequest(req, port) !== null) return respond(421, "misdirected request: this server answers only its loopback origin\n", undefined, head);
  if (path.includes("%") || path.includes("\\")) return respond(400, "bad request: encoded or escaped paths are refused\n", undefined, head);
  const segs = path.split("/").slice(1);
  if (segs.some((s, i) => s === "." || s === ".." || (s === "" && i !== segs.length - 1))) {
    return respond(400, "bad request: dot or empty path segments are refused\n", undefined, head);
  }
  return undefined;
}

/** The index page: every run, newest first, each verified on this request (a cached state could be stale by one edited file). */
async function indexResponse(state: LibraryState, head: boolean): Promise<Response> {
  const runs = await listRuns(state.cwd);
  const states = new Map<string, { label: string; cls: string }>();
  for (const r of runs) {
    const st = servedState(await verifyRun(join(state.root, r.runId), { trust: state.trust }));
    states.set(r.runId, { label: st.label, cls: stateClass(st) });
  }
  return respond(200, renderLibraryIndexHtml(runs, new Date().toISOString(), states), "text/html; charset=utf-8", head);
}

/**
 * The refusal of a run whose `.humanish`, runs directory or run directory is not a real
 * directory: 403 for a symlink, 404 for a missing one or another kind of file. Undefined to proceed.
 */
function refuseRunDirs(state: LibraryState, runId: string, head: boolean): Response | undefined {
  for (const dir of [join(state.cwd, ".humanish"), state.root, join(state.root, runId)]) {
    let st: Stats;
    try {
      st = lstatSync(dir);
    } catch {
      return respond(404, "run not found\n", undefined, head);
    }
    if (st.isSymbolicLink()) return respond(403, "forbidden: symlinked run directories are refused\n", undefined, head);
    if (!st.isDirectory()) return respond(404, "run not found\n", undefined, head);
  }
  return undefined;
}

/**
 * A run's report (see module doc): 403 for a report file that is not plain, 404 while unsealed,
 * 409 with the reasons when the bundle does not verify on this request; else the report on disk,
 * or one rendered in memory (422 with the code when it cannot be, 500 on anything unexpected).
 */
async function reportResponse(state: LibraryState, runDir: string, runId: string, head: boolean): Promise<Response> {
  // A report file that is not a plain contained file is refused as such, whatever the bundle says.
  const file = readContainedFile(runDir, REPORT_PATH, MAX_REPORT_BYTES);
  if (!file.ok && file.reason !== "not_found") {
    return respond(403, `forbidden: the report file is refused (${file.reason.replace(/_/g, " ")})\n`, undefined, head);
  }
  // The bundle is verified on every request before any byte of its report is sent.
  const verify = await verifyRun(runDir, { trust: state.trust });
  const served = servedState(verify);
  if (served.kind === "not_sealed") {
    return respond(
      404,
      `run ${runId} has no sealed run.json yet: it is still running, or it was interrupted before its bundle was written.\n`,
      undefined,
      head,
    );
  }
  if (served.kind === "not_verified") return respond(409, refusedReportHtml(runId, served), "text/html; charset=utf-8", head);
  const mark = (html: string) => rebaseLinks(served.kind === "local_only" ? withBanner(html, localOnlyBanner(runId, served)) : html, runId);
  if (file.ok) return respond(200, mark(new TextDecoder().decode(file.bytes)), "text/html; charset=utf-8", head);
  // No report on disk yet: render one in memory (read-only; nothing is written).
  try {
    const model = await loadReportModel(runDir, { verify });
    return respond(200, mark(renderReportHtml(model)), "text/html; charset=utf-8", head);
  } catch (err) {
    if (err instanceof HumanishError) return respond(422, `${err.code}: ${err.message}\n`, undefined, head);
    return respond(500, "HUMANISH_UNEXPECTED: the report could not be rendered\n", undefined, head);
  }
}

/** One request (see module doc for the routes and refusals). */
async function handleRequest(state: LibraryState, req: Request): Promise<Response> {
  const head = req.method === "HEAD";
  const path = pathOf(req);
  const refused = refuseRequest(req, path, state.port, head);
  if (refused) return refused;
  if (path === "/" || path === "/index.html") return indexResponse(state, head);
  const shot = SHOT_ROUTE.exec(path);
  const m = shot ?? RUN_ROUTE.exec(path);
  if (!m) return respond(404, "not found\n", undefined, head);
  const runId = m[1]!;
  if (!isSafeRunSegment(runId) || runId.startsWith(".") || runId === "latest.json") return respond(404, "not found\n", undefined, head);
  const badDir = refuseRunDirs(state, runId, head);
  if (badDir) return badDir;
  const runDir = join(state.root, runId);
  if (!shot) return reportResponse(state, runDir, runId, head);
  const st = servedState(await verifyRun(runDir, { trust: state.trust }));
  if (st.kind === "not_sealed" || st.kind === "not_verified") return respond(409, "refused: the run's bundle does not verify\n", undefined, head);
  return screenshotResponse(runDir, shot[2]!, head);
}

/**
 * Binds `bind`; every request goes to `handle`, and anything it throws answers 500.
 * @throws HumanishError HUMANISH_PORT_IN_USE (the port is taken); any other bind error as is
 */
function listen(bind: { hostname: string; port: number }, handle: (req: Request) => Promise<Response>): ReturnType<typeof Bun.serve> {
  try {
    return Bun.serve({
      hostname: bind.hostname,
      port: bind.port,
      fetch: (req) => handle(req).catch(() => respond(500, "HUMANISH_UNEXPECTED: internal error\n")),
      error: () => respond(500, "HUMANISH_UNEXPECTED: internal error\n"),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || /in use/i.test((err as Error).message)) {
      throw new HumanishError("HUMANISH_PORT_IN_USE", `Port ${bind.port} on 127.0.0.1 is already in use.`, {
        next: "humanish serve --port 0 (picks a free port)",
      });
    }
    throw err;
  }
}

/**
 * Starts the library server for `opts.cwd` (see module doc).
 * @throws HumanishError HUMANISH_SERVE_NON_LOOPBACK (non-loopback host), HUMANISH_INVALID_PORT,
 *   HUMANISH_PORT_IN_USE (the port is taken)
 */
export async function startLibraryServer(opts: LibraryServerOptions): Promise<LibraryServer> {
  const bind = checkBind(opts.host, opts.port);
  const state: LibraryState = { cwd: opts.cwd, root: runsDir(opts.cwd), trust: opts.trust ?? defaultTrust(), port: 0 };
  const server = listen(bind, (req) => handleRequest(state, req));
  state.port = server.port!;
  const port = state.port;
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop(true);
    },
  };
}
