/**
 * Serving the app of a local browser study (lab `subject.serve`): a static directory server or
 * a declared command, both on 127.0.0.1 at the appUrl's port; or, when `serve` is absent, a
 * check that the app already answers. The guest reaches this port only through the desktop's
 * forwarded Unix socket.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, relative, resolve, sep } from "node:path";
import { HumanishError } from "../../errors.ts";
import { embeddedRootName } from "../../lab/embedded-apps.ts";
import { type HostProcessOwner, type OwnedHostProcess, ownHostProcess, releaseHostProcess } from "../../runtime/host-process.ts";
import { type EmbeddedApp, loadEmbeddedApp } from "./embedded-app.ts";

/** A running (or pre-existing) app. */
export interface AppServer {
  /** `static`, `command` or `external` (already listening). */
  kind: "static" | "command" | "external";
  /**
   * The host port the app answers on. A `static` app is served on an ephemeral port of its own,
   * so two studies of the same lab can run side by side; the guest still sees the lab's appUrl
   * port, which its forwarder carries to this one. A `command` or `external` app answers on the
   * appUrl port itself.
   */
  port: number;
  /**
   * Provenance of an embedded app (`static.root: "embedded:<name>"`): its name, npm package,
   * directory in the package, SHA-256 over its files and each file's path/size/SHA-256. Absent
   * for a project directory, a command or an external app.
   */
  embedded?: EmbeddedAppProvenance;
  /**
   * For `command`: the owner record id `host-process:<pid>:<start ticks>` of its process group,
   * written before the app was waited on, so a later command can end it if this one dies.
   */
  hostProcessId?: string;
  /** Stop what this module started (nothing for `external`). */
  close(): Promise<void>;
}

/** What was served for an embedded app, for the run bundle. */
export interface EmbeddedAppProvenance {
  name: string;
  package: string;
  dir: string;
  /** Lowercase hex SHA-256 over the app's `sha256sum`-style file listing. */
  sha256: string;
  /** Total bytes served. */
  bytes: number;
  files: { path: string; bytes: number; sha256: string }[];
}

/** The lab's `subject.serve` block (as normalised by the lab schema). */
export interface ServeDecl {
  /** `root`: a directory relative to the project, or `embedded:<name>` (an app compiled into humanish). */
  static?: { root: string };
  command?: string;
  readyTimeoutMs?: number;
}

function appUnreachable(url: string, detail: string, next = "start the app on that loopback port, or declare subject.serve in the lab"): HumanishError {
  return new HumanishError("HUMANISH_BROWSER_APP_UNREACHABLE", `the app at ${url} did not answer (${detail})`, { next });
}

/** True when a GET of `url` answers with a status below 500 within `timeoutMs`. */
export async function appAnswers(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    await res.arrayBuffer().catch(() => undefined);
    return res.status < 500;
  } catch {
    return false;
  }
}

/**
 * A read-only HTTP server on 127.0.0.1:`port` (0: an ephemeral port, read back from the
 * server): GET/HEAD only (else 405); `respond(pathname)` answers or returns undefined for 404.
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED` naming `what` when the port is taken.
 */
function serveReadOnly(port: number, what: string, respond: (pathname: string) => Response | undefined): ReturnType<typeof Bun.serve> {
  try {
    return Bun.serve({
      hostname: "127.0.0.1",
      port,
      fetch(req) {
        if (req.method !== "GET" && req.method !== "HEAD") return new Response("method not allowed", { status: 405 });
        return respond(new URL(req.url, "http://127.0.0.1").pathname) ?? new Response("not found", { status: 404 });
      },
    });
  } catch (e) {
    throw new HumanishError("HUMANISH_BROWSER_SERVE_FAILED", `cannot serve ${what} on 127.0.0.1:${port} (${(e as Error).message})`, {
      next: `free port ${port} or change subject.appUrl's port`,
    });
  }
}

/**
 * Serve a directory on 127.0.0.1:`port`: `/` → `index.html`, other paths → files inside `root`
 * only (symlinks resolved and contained), 404 otherwise. GET/HEAD only.
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED` when `root` is not a directory or the port is taken.
 */
export function serveStatic(rootDir: string, port: number): AppServer {
  let root: string;
  try {
    root = realpathSync(rootDir);
    if (!statSync(root).isDirectory()) throw new Error("not a directory");
  } catch (e) {
    throw new HumanishError("HUMANISH_BROWSER_SERVE_FAILED", `subject.serve.static.root ${rootDir} is not a directory (${(e as Error).message})`, {
      next: "point subject.serve.static.root at the app's directory (relative to the project), or use an embedded app such as embedded:todomvc-vanillajs",
    });
  }
  const resolveFile = (pathname: string): string | undefined => {
    let rel: string;
    try {
      rel = decodeURIComponent(pathname);
    } catch {
      return undefined;
    }
    if (rel.includes("\0")) return undefined;
    let candidate = normalize(join(root, rel));
    try {
      if (statSync(candidate).isDirectory()) candidate = join(candidate, "index.html");
      const real = realpathSync(candidate);
      const r = relative(root, real);
      if (r.startsWith("..") || isAbsolute(r) || r.split(sep).includes("..")) return undefined;
      return statSync(real).isFile() ? real : undefined;
    } catch {
      return undefined;
    }
  };
  const server = serveReadOnly(port, rootDir, (pathname) => {
    const file = resolveFile(pathname);
    return file ? new Response(Bun.file(file), { headers: { "cache-control": "no-store" } }) : undefined;
  });
  return {
    kind: "static",
    port: server.port ?? port,
    close: async () => {
      server.stop(true);
    },
  };
}

/**
 * Serve an embedded app from memory on 127.0.0.1:`port`: `/` → `index.html`; otherwise only an
 * exact (percent-decoded) path of one of its files answers, so nothing outside the app can be
 * reached; 404 otherwise. GET/HEAD only.
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED` when the port is taken.
 */
export function serveEmbedded(app: EmbeddedApp, port: number): AppServer {
  const byPath = new Map(app.files.map((f) => [f.path, f]));
  const lookup = (pathname: string) => {
    let rel: string;
    try {
      rel = decodeURIComponent(pathname);
    } catch {
      return undefined;
    }
    if (rel === "/" || rel === "") rel = "/index.html";
    return rel.startsWith("/") ? byPath.get(rel.slice(1)) : undefined;
  };
  const server = serveReadOnly(port, `embedded app ${app.name}`, (pathname) => {
    const f = lookup(pathname);
    return f ? new Response(f.bytes, { headers: { "content-type": f.contentType, "cache-control": "no-store" } }) : undefined;
  });
  return {
    kind: "static",
    port: server.port ?? port,
    embedded: {
      name: app.name,
      package: app.package,
      dir: app.dir,
      sha256: app.sha256,
      bytes: app.bytes,
      files: app.files.map((f) => ({ path: f.path, bytes: f.bytes.byteLength, sha256: f.sha256 })),
    },
    close: async () => {
      server.stop(true);
    },
  };
}

/**
 * Start the app for a study: `serve.static` (root relative to `cwd`, or `embedded:<name>` served
 * from memory — see {@link serveEmbedded}), `serve.command` (shell in `cwd` with `PORT`, its own
 * process group, owned like a container: pid + start time recorded for `owner` before readiness
 * is awaited, ready when a GET of appUrl answers < 500), or nothing (the app must already answer).
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED`, `HUMANISH_BROWSER_APP_UNREACHABLE`.
 */
export async function startApp(opts: {
  appUrl: string;
  serve?: ServeDecl;
  cwd: string;
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** Run and project the app server belongs to (recorded with its pid). */
  owner?: Omit<HostProcessOwner, "port">;
}): Promise<AppServer> {
  const url = new URL(opts.appUrl);
  const port = Number(url.port);
  if (opts.serve?.static) {
    // Port 0: the host side of the forwarder needs no fixed port, and a fixed one would keep a
    // second study of the same lab from starting while the first runs.
    const name = embeddedRootName(opts.serve.static.root);
    const app = name !== undefined ? serveEmbedded(await loadEmbeddedApp(name), 0) : serveStatic(resolve(opts.cwd, opts.serve.static.root), 0);
    const onHost = new URL(url.href);
    onHost.port = String(app.port);
    if (!(await appAnswers(onHost.href))) {
      await app.close();
      throw appUnreachable(opts.appUrl, "the static server did not answer");
    }
    return app;
  }
  if (opts.serve?.command) {
    // Something already answering would be studied instead of the command's app.
    if (await appAnswers(opts.appUrl)) {
      throw new HumanishError(
        "HUMANISH_BROWSER_SERVE_FAILED",
        `cannot start serve.command: something already answers at ${opts.appUrl}, so the study would not reach the command's app`,
        {
          next: `stop whatever listens on 127.0.0.1:${port}, or change subject.appUrl's port`,
        },
      );
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.env ?? process.env)) if (v !== undefined) env[k] = v;
    env.PORT = String(port);
    // detached: the shell leads its own process group, so the whole app tree is ended together.
    const child: ChildProcess = spawn("/bin/sh", ["-c", opts.serve.command], { cwd: opts.cwd, env, detached: true, stdio: "ignore" });
    let owned: OwnedHostProcess;
    try {
      if (child.pid === undefined) throw new Error("spawn gave no pid");
      owned = ownHostProcess(child.pid, { ...(opts.owner ?? {}), port });
    } catch (e) {
      // Our own unreaped child: its pid cannot have been reused yet, so the group is safe to kill.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
      throw new HumanishError(
        "HUMANISH_BROWSER_SERVE_FAILED",
        `serve.command could not be recorded as owned by this run (${(e as Error).message}); it was stopped`,
        {
          next: "check that the temp directory is writable, then run the lab again",
        },
      );
    }
    const stop = async () => {
      const proof = await releaseHostProcess(owned.record);
      // An unconfirmed stop keeps the record, so the next command's sweep tries again.
      if (proof.outcome === "released") owned.disown();
    };
    const readyMs = opts.serve.readyTimeoutMs ?? 30_000;
    const deadline = Date.now() + readyMs;
    while (!(await appAnswers(opts.appUrl, 1_000))) {
      if (child.exitCode !== null || Date.now() > deadline || opts.signal?.aborted) {
        await stop();
        const detail =
          child.exitCode !== null
            ? `serve.command exited with ${child.exitCode}`
            : opts.signal?.aborted
              ? "interrupted while waiting for serve.command"
              : `serve.command was not ready within readyTimeoutMs (${readyMs} ms)`;
        throw appUnreachable(
          opts.appUrl,
          detail,
          `make serve.command listen on 127.0.0.1:$PORT (PORT=${port}) and answer a GET of ${opts.appUrl} below 500, or raise readyTimeoutMs`,
        );
      }
      await Bun.sleep(200);
    }
    return { kind: "command", port, hostProcessId: owned.id, close: stop };
  }
  if (!(await appAnswers(opts.appUrl))) throw appUnreachable(opts.appUrl, "nothing answered and the lab declares no subject.serve");
  return { kind: "external", port, close: async () => undefined };
}
