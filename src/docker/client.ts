/**
 * Docker Engine API client over the Unix socket with `fetch(url, { unix })` (ARCHITECTURE.md
 * "Local runtime (Docker)"). API version prefix `v1.41`; `DOCKER_HOST=unix://…` overrides the
 * default socket `/var/run/docker.sock`; other transports are refused ({@link resolveDockerSocket}).
 *
 * Methods are named after Engine API operations. Failures are `HumanishError`s:
 * `DockerApiError` (HTTP status + engine message), `HUMANISH_DOCKER_UNAVAILABLE` (socket unreachable),
 * `HUMANISH_DOCKER_TIMEOUT`, `HUMANISH_DOCKER_ABORTED`, `HUMANISH_DOCKER_STREAM_INVALID`,
 * `HUMANISH_DOCKER_PROGRESS_ERROR` (an `errorDetail` line in a build/load stream).
 */
import { HumanishError } from "../errors.ts";
import { type DemuxCallbacks, type DemuxedOutput, demuxBody, rawBody } from "./demux.ts";
import { DockerApiError, dockerStreamInvalid, dockerTimeout, dockerUnavailable } from "./errors.ts";
import { type JsonMessage, progressFailed, readProgress } from "./json-stream.ts";
import type {
  ContainerCreateBody,
  ContainerInspect,
  ContainerSummary,
  EngineVersion,
  ExecCreateBody,
  ExecInspect,
  ImageInspect,
  ImageSummary,
  PathStat,
  SystemDf,
} from "./types.ts";

/** Default socket when `DOCKER_HOST` is unset. */
export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";
/** API version path prefix (the lowest version humanish requires). */
export const DOCKER_API_VERSION = "v1.41";
/** Default deadline of a non-streaming request, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Code when `DOCKER_HOST` names an endpoint humanish does not speak (tcp, ssh, npipe, …). */
export const DOCKER_HOST_UNSUPPORTED = "HUMANISH_DOCKER_HOST_UNSUPPORTED";

/**
 * The one rule for finding the engine, used by every caller (CLI orphan sweep, both routes, the
 * env server, doctor, runtime, tests): `DOCKER_HOST=unix:///abs/path` → that socket; unset or
 * empty → `/var/run/docker.sock`. Pass the command context's env (process env merged with
 * `--env-file`) so both sources give the same answer.
 * @throws HumanishError `HUMANISH_DOCKER_HOST_UNSUPPORTED` for `tcp://`, `ssh://`, `npipe://`, a
 *   relative unix path or anything else: humanish talks to a local engine over its Unix socket only.
 */
export function resolveDockerSocket(env: Record<string, string | undefined> = process.env): string {
  const host = env.DOCKER_HOST;
  if (host === undefined || host === "") return DEFAULT_DOCKER_SOCKET;
  if (host.startsWith("unix://") && host.slice("unix://".length).startsWith("/")) return host.slice("unix://".length);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(host)?.[1]?.toLowerCase();
  const what = scheme === "unix" ? "a unix:// socket without an absolute path" : scheme ? `a ${scheme}:// endpoint` : "not a URL";
  throw new HumanishError(
    DOCKER_HOST_UNSUPPORTED,
    `DOCKER_HOST=${host} is ${what}; humanish talks to a local Docker engine over its Unix socket only (DOCKER_HOST=unix:///path)`,
    {
      next: "unset DOCKER_HOST to use /var/run/docker.sock, or set DOCKER_HOST=unix:///path/to/docker.sock (remote engines: forward their socket to a local path first)",
      details: { dockerHost: host, ...(scheme ? { scheme } : {}) },
    },
  );
}

/** Options of `createDockerClient` / `new DockerClient`. */
export interface DockerClientOptions {
  /** Unix socket path; default from `DOCKER_HOST` or `/var/run/docker.sock`. */
  socketPath?: string;
  /** API version prefix, default `v1.41`. */
  apiVersion?: string;
  /** Deadline of non-streaming requests in ms (default 30000). */
  timeoutMs?: number;
}

/** Per-call options shared by most methods. */
export interface CallOptions {
  /** Deadline in ms for this call (streaming calls have none unless given). */
  timeoutMs?: number;
  /** Abort the call. */
  signal?: AbortSignal;
}

/** Progress callback options of build/load. */
export interface ProgressOptions extends CallOptions {
  onProgress?: (message: JsonMessage) => void;
}

/** Options of `imageBuild` (query parameters of `POST /build`). */
export interface ImageBuildOptions extends ProgressOptions {
  /** Tags `name:tag` to apply. */
  tags?: string[];
  /** Path of the Dockerfile inside the context (default `Dockerfile`). */
  dockerfile?: string;
  /** Labels set on the image. */
  labels?: Record<string, string>;
  buildArgs?: Record<string, string>;
  noCache?: boolean;
  /** Try to pull a newer base (default false: no registry is assumed). */
  pull?: boolean;
}

/** Result of `imageBuild`. */
export interface ImageBuildResult {
  /** `sha256:…` id from the stream's `aux.ID`, or from inspecting the first tag. */
  imageId: string;
  messages: JsonMessage[];
}

/** Result of `imageLoad`. */
export interface ImageLoadResult {
  /** References reported as loaded (`Loaded image: x` / `Loaded image ID: sha256:…`). */
  loaded: string[];
  messages: JsonMessage[];
}

/** A request body the client can send (bytes, a file/Blob, or a byte stream). */
export type DockerRequestBody = Uint8Array | Blob | ReadableStream<Uint8Array>;

/** Docker Engine API client bound to one Unix socket. */
export class DockerClient {
  /** The Unix socket path this client talks to. */
  readonly socketPath: string;
  /** API version prefix, e.g. `v1.41`. */
  readonly apiVersion: string;
  private readonly timeoutMs: number;

  constructor(opts: DockerClientOptions = {}) {
    this.socketPath = opts.socketPath ?? resolveDockerSocket();
    this.apiVersion = opts.apiVersion ?? DOCKER_API_VERSION;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /**
   * Sends one request and returns the response once its status is known. Statuses in `ok` are
   * returned; others become `DockerApiError`. `timeoutMs: 0` = no deadline (streams).
   */
  private async call(
    operation: string,
    method: string,
    path: string,
    o: {
      query?: Record<string, string | number | boolean | undefined>;
      json?: unknown;
      body?: DockerRequestBody;
      headers?: Record<string, string>;
      ok?: number[];
      timeoutMs?: number;
      signal?: AbortSignal;
      versioned?: boolean;
    } = {},
  ): Promise<Response> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const prefix = o.versioned === false ? "" : `/${this.apiVersion}`;
    const url = `http://docker${prefix}${path}${qs.size ? `?${qs}` : ""}`;
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const timer = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signals = [timer, o.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    let body: RequestInit["body"] | undefined;
    if (o.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(o.json);
    } else if (o.body !== undefined) {
      body = o.body as RequestInit["body"];
    }
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body, signal, unix: this.socketPath } as RequestInit);
    } catch (e) {
      throw this.translate(e, operation, path, timeoutMs, timer, o.signal);
    }
    if ((o.ok ?? [200, 201, 204]).includes(res.status)) return res;
    let text = "";
    try {
      text = await res.text();
    } catch (e) {
      text = `(body unreadable: ${(e as Error).message})`;
    }
    let message = text.trim();
    try {
      const parsed = JSON.parse(text) as { message?: unknown };
      if (typeof parsed.message === "string") message = parsed.message;
    } catch {
      // not JSON: keep the raw text
    }
    throw new DockerApiError(operation, res.status, message || res.statusText, `${method} ${path}`);
  }

  private translate(e: unknown, operation: string, path: string, timeoutMs: number, timer?: AbortSignal, caller?: AbortSignal): HumanishError {
    if (e instanceof HumanishError) return e;
    if (timer?.aborted) return dockerTimeout(operation, path, timeoutMs);
    if (caller?.aborted) {
      return new HumanishError("HUMANISH_DOCKER_ABORTED", `Docker Engine ${operation} (${path}) was aborted by the caller`, {
        next: "nothing to do if the abort was intended; otherwise retry",
        cause: e,
      });
    }
    return dockerUnavailable(this.socketPath, e);
  }

  /** Wraps body-reading errors of a streaming call the same way `call` wraps fetch errors. */
  private async readBody<T>(operation: string, path: string, read: () => Promise<T>, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    try {
      return await read();
    } catch (e) {
      if (e instanceof HumanishError) throw e;
      if (signal?.aborted) {
        throw new HumanishError("HUMANISH_DOCKER_ABORTED", `Docker Engine ${operation} (${path}) was aborted while reading its output`, {
          next: "nothing to do if the abort was intended; otherwise retry",
          cause: e,
        });
      }
      if (timeoutMs > 0 && e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) throw dockerTimeout(operation, path, timeoutMs);
      throw dockerStreamInvalid(`${operation} body could not be read: ${(e as Error).message}`);
    }
  }

  private async json<T>(res: Response, operation: string): Promise<T> {
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw dockerStreamInvalid(`${operation} answered non-JSON: ${text.slice(0, 200)}`);
    }
  }

  /** `GET /_ping` → `"OK"`. Throws `HUMANISH_DOCKER_UNAVAILABLE` when the socket is unreachable. */
  async ping(opts: CallOptions = {}): Promise<string> {
    const res = await this.call("SystemPing", "GET", "/_ping", { ...opts, versioned: false, timeoutMs: opts.timeoutMs ?? 5000 });
    return (await res.text()).trim();
  }

  /** `GET /version`. */
  async version(opts: CallOptions = {}): Promise<EngineVersion> {
    return this.json<EngineVersion>(await this.call("SystemVersion", "GET", "/version", opts), "SystemVersion");
  }

  /**
   * `GET /images/json?filters={"reference":[…],"label":[…]}` — used only to FIND images (e.g. stale
   * humanish images); removal is always by exact id. `references` entries are repository names
   * (`humanish-sandbox`), `labels` are `key` or `key=value`.
   */
  async imageList(opts: CallOptions & { references?: string[]; labels?: string[] } = {}): Promise<ImageSummary[]> {
    const f: Record<string, string[]> = {};
    if (opts.references?.length) f.reference = opts.references;
    if (opts.labels?.length) f.label = opts.labels;
    const res = await this.call("ImageList", "GET", "/images/json", { ...opts, query: { filters: Object.keys(f).length ? JSON.stringify(f) : undefined } });
    return this.json(res, "ImageList");
  }

  /**
   * `GET /system/df`: disk usage of layers, images (with their shared bytes), containers.
   * The engine computes one disk usage at a time and answers a second caller with HTTP 500 "a
   * disk usage operation is already running" (another humanish, `docker system df`); that
   * answer is waited out, every 250 ms for up to 60 s, since the other computation ends on its own.
   * @throws DockerApiError for any other failure, or when the engine is still busy after 60 s.
   */
  async systemDf(opts: CallOptions = {}): Promise<SystemDf> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return this.json<SystemDf>(await this.call("SystemDataUsage", "GET", "/system/df", opts), "SystemDataUsage");
      } catch (e) {
        const busy = e instanceof DockerApiError && e.status === 500 && /disk usage operation is already running/i.test(e.message);
        if (!busy || Date.now() >= deadline || opts.signal?.aborted) throw e;
        await Bun.sleep(250);
      }
    }
  }

  /** `GET /images/{name}/json`. Throws `DockerApiError` 404 when the image is missing. */
  async imageInspect(name: string, opts: CallOptions = {}): Promise<ImageInspect> {
    return this.json<ImageInspect>(await this.call("ImageInspect", "GET", `/images/${encodeURIComponent(name)}/json`, opts), "ImageInspect");
  }

  /**
   * `POST /build` with a tar context (bytes, Blob or stream). Parses the JSON progress stream; an
   * `errorDetail`/`error` line makes it throw `HUMANISH_DOCKER_PROGRESS_ERROR` even with HTTP 200.
   * No deadline unless `timeoutMs` is given.
   */
  async imageBuild(context: DockerRequestBody, opts: ImageBuildOptions = {}): Promise<ImageBuildResult> {
    const query: Record<string, string | number | boolean | undefined> = {
      dockerfile: opts.dockerfile,
      labels: opts.labels ? JSON.stringify(opts.labels) : undefined,
      buildargs: opts.buildArgs ? JSON.stringify(opts.buildArgs) : undefined,
      nocache: opts.noCache ? 1 : undefined,
      pull: opts.pull ? 1 : undefined,
      rm: 1,
      forcerm: 1,
    };
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    for (const t of opts.tags ?? []) qs.append("t", t);
    const path = `/build?${qs}`;
    const timeoutMs = opts.timeoutMs ?? 0;
    const res = await this.call("ImageBuild", "POST", path, {
      body: context,
      headers: { "content-type": "application/x-tar" },
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const result = await this.readBody("ImageBuild", "/build", () => readProgress(res.body!, opts.onProgress), timeoutMs, opts.signal);
    if (result.error !== undefined) throw progressFailed("ImageBuild", result.error);
    let imageId: string | undefined;
    for (const m of result.messages) {
      const id = m.aux?.ID;
      if (typeof id === "string") imageId = id;
    }
    if (imageId === undefined) {
      const tag = opts.tags?.[0];
      if (tag === undefined) throw dockerStreamInvalid("ImageBuild reported no image id and no tag was given");
      imageId = (await this.imageInspect(tag)).Id;
    }
    return { imageId, messages: result.messages };
  }

  /**
   * `POST /images/load` with an image archive (`docker save` format). An `errorDetail` line makes it
   * throw `HUMANISH_DOCKER_PROGRESS_ERROR` even with HTTP 200. No deadline unless given.
   */
  async imageLoad(archive: DockerRequestBody, opts: ProgressOptions = {}): Promise<ImageLoadResult> {
    const timeoutMs = opts.timeoutMs ?? 0;
    const res = await this.call("ImageLoad", "POST", "/images/load", {
      query: { quiet: 1 },
      body: archive,
      headers: { "content-type": "application/x-tar" },
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const result = await this.readBody("ImageLoad", "/images/load", () => readProgress(res.body!, opts.onProgress), timeoutMs, opts.signal);
    if (result.error !== undefined) throw progressFailed("ImageLoad", result.error);
    const loaded: string[] = [];
    for (const m of result.messages) {
      const s = m.stream ?? m.status ?? "";
      const match = /Loaded image(?: ID)?: (\S+)/.exec(s);
      if (match) loaded.push(match[1]!);
    }
    return { loaded, messages: result.messages };
  }

  /** `GET /images/{name}/get`: the image as a `docker save` tar stream. */
  async imageGet(name: string, opts: CallOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const res = await this.call("ImageGet", "GET", `/images/${encodeURIComponent(name)}/get`, { ...opts, timeoutMs: opts.timeoutMs ?? 0 });
    return res.body!;
  }

  /** `DELETE /images/{name}`. Returns the engine's list of untagged/deleted references. */
  async imageRemove(name: string, opts: CallOptions & { force?: boolean; noprune?: boolean } = {}): Promise<{ Untagged?: string; Deleted?: string }[]> {
    const res = await this.call("ImageDelete", "DELETE", `/images/${encodeURIComponent(name)}`, {
      ...opts,
      query: { force: opts.force ? 1 : undefined, noprune: opts.noprune ? 1 : undefined },
    });
    return this.json(res, "ImageDelete");
  }

  /** `POST /containers/create`. Throws `DockerApiError` (404 no such image, 409 name conflict). */
  async containerCreate(body: ContainerCreateBody, opts: CallOptions & { name?: string } = {}): Promise<{ Id: string; Warnings: string[] }> {
    const res = await this.call("ContainerCreate", "POST", "/containers/create", { ...opts, query: { name: opts.name }, json: body });
    return this.json(res, "ContainerCreate");
  }

  /** `POST /containers/{id}/start`. 304 (already started) is success: `{ alreadyStarted: true }`. */
  async containerStart(id: string, opts: CallOptions = {}): Promise<{ alreadyStarted: boolean }> {
    const res = await this.call("ContainerStart", "POST", `/containers/${encodeURIComponent(id)}/start`, { ...opts, ok: [204, 304] });
    await res.body?.cancel().catch(() => {});
    return { alreadyStarted: res.status === 304 };
  }

  /** `POST /containers/{id}/wait` — resolves when the container reaches `condition` (default `not-running`). No deadline unless given. */
  async containerWait(
    id: string,
    opts: CallOptions & { condition?: "not-running" | "next-exit" | "removed" } = {},
  ): Promise<{ StatusCode: number; Error?: { Message: string } | null }> {
    const res = await this.call("ContainerWait", "POST", `/containers/${encodeURIComponent(id)}/wait`, {
      ...opts,
      timeoutMs: opts.timeoutMs ?? 0,
      query: { condition: opts.condition },
    });
    return this.json(res, "ContainerWait");
  }

  /**
   * `GET /containers/{id}/json` (with `size: true`, `?size=1`: `SizeRw` = bytes in its writable
   * layer, which costs the engine a walk of that layer). Throws `DockerApiError` 404 when the
   * container does not exist.
   */
  async containerInspect(id: string, opts: CallOptions & { size?: boolean } = {}): Promise<ContainerInspect> {
    const { size, ...rest } = opts;
    return this.json<ContainerInspect>(
      await this.call("ContainerInspect", "GET", `/containers/${encodeURIComponent(id)}/json`, { ...rest, query: { size: size ? 1 : undefined } }),
      "ContainerInspect",
    );
  }

  /**
   * `POST /networks/{id}/disconnect` with `{Container, Force}`: detaches a container from a
   * network (e.g. `bridge`). Throws `DockerApiError` (404 unknown network or container).
   */
  async networkDisconnect(network: string, container: string, opts: CallOptions & { force?: boolean } = {}): Promise<void> {
    const { force, ...rest } = opts;
    await this.call("NetworkDisconnect", "POST", `/networks/${encodeURIComponent(network)}/disconnect`, {
      ...rest,
      json: { Container: container, Force: force ?? false },
    });
  }

  /** `POST /containers/{id}/kill` (default SIGKILL). Throws 409 when not running. */
  async containerKill(id: string, opts: CallOptions & { killSignal?: string } = {}): Promise<void> {
    const { killSignal, ...rest } = opts;
    await this.call("ContainerKill", "POST", `/containers/${encodeURIComponent(id)}/kill`, { ...rest, query: { signal: killSignal } });
  }

  /**
   * `DELETE /containers/{id}`. Returns `"removed"` on 204 and `"not-found"` on 404 (already gone —
   * callers that need proof must still inspect). Other statuses throw `DockerApiError`.
   */
  async containerRemove(id: string, opts: CallOptions & { force?: boolean; volumes?: boolean } = {}): Promise<"removed" | "not-found"> {
    const res = await this.call("ContainerDelete", "DELETE", `/containers/${encodeURIComponent(id)}`, {
      ...opts,
      ok: [204, 404],
      query: { force: opts.force ? 1 : undefined, v: opts.volumes ? 1 : undefined },
    });
    await res.body?.cancel().catch(() => {});
    return res.status === 204 ? "removed" : "not-found";
  }

  /**
   * `GET /containers/json?all=1&filters={"label":[…]}` — used only to FIND containers (e.g. orphans of a
   * run); removal is always by exact id. `labels` entries are `key` or `key=value`.
   */
  async containerList(opts: CallOptions & { all?: boolean; labels?: string[] } = {}): Promise<ContainerSummary[]> {
    const filters = opts.labels?.length ? JSON.stringify({ label: opts.labels }) : undefined;
    const res = await this.call("ContainerList", "GET", "/containers/json", { ...opts, query: { all: opts.all === false ? undefined : 1, filters } });
    return this.json(res, "ContainerList");
  }

  /**
   * `GET /containers/{id}/logs` demultiplexed into stdout/stderr (raw when `tty`). Resolves after the
   * body drained. With `follow`, there is no deadline unless given.
   */
  async containerLogs(
    id: string,
    opts: CallOptions & DemuxCallbacks & { stdout?: boolean; stderr?: boolean; follow?: boolean; tail?: number | "all"; tty?: boolean } = {},
  ): Promise<DemuxedOutput> {
    const path = `/containers/${encodeURIComponent(id)}/logs`;
    const timeoutMs = opts.timeoutMs ?? (opts.follow ? 0 : this.timeoutMs);
    const res = await this.call("ContainerLogs", "GET", path, {
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      query: { stdout: opts.stdout === false ? 0 : 1, stderr: opts.stderr === false ? 0 : 1, follow: opts.follow ? 1 : undefined, tail: opts.tail },
    });
    const read = opts.tty ? rawBody : demuxBody;
    return this.readBody("ContainerLogs", path, () => read(res.body!, opts), timeoutMs, opts.signal);
  }

  /** `POST /containers/{id}/exec` → exec id. Never privileged (the field does not exist here). */
  async execCreate(containerId: string, body: ExecCreateBody, opts: CallOptions = {}): Promise<string> {
    const res = await this.call("ContainerExec", "POST", `/containers/${encodeURIComponent(containerId)}/exec`, {
      ...opts,
      json: { AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false, ...body },
    });
    const { Id } = await this.json<{ Id: string }>(res, "ContainerExec");
    return Id;
  }

  /**
   * `POST /exec/{id}/start` (no stdin, so no HTTP upgrade) and reads the 8-byte multiplexed stream to
   * its end, forwarding chunks to the callbacks. Resolves only after the stream drained, so a following
   * `execInspect` sees the final exit code. No deadline unless given; `signal` cancels the read.
   */
  async execStart(execId: string, opts: CallOptions & DemuxCallbacks & { tty?: boolean } = {}): Promise<DemuxedOutput> {
    const path = `/exec/${encodeURIComponent(execId)}/start`;
    const timeoutMs = opts.timeoutMs ?? 0;
    const res = await this.call("ExecStart", "POST", path, {
      timeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      json: { Detach: false, Tty: opts.tty ?? false },
    });
    const read = opts.tty ? rawBody : demuxBody;
    return this.readBody("ExecStart", path, () => read(res.body!, opts), timeoutMs, opts.signal);
  }

  /** `GET /exec/{id}/json`. */
  async execInspect(execId: string, opts: CallOptions = {}): Promise<ExecInspect> {
    return this.json<ExecInspect>(await this.call("ExecInspect", "GET", `/exec/${encodeURIComponent(execId)}/json`, opts), "ExecInspect");
  }

  /**
   * `PUT /containers/{id}/archive?path=dir` — extracts a tar archive into directory `path`.
   * `copyUIDGID` makes the engine own the files by the container's user. Throws `DockerApiError`
   * 404 when `path` does not exist.
   */
  async putArchive(
    id: string,
    path: string,
    tar: DockerRequestBody,
    opts: CallOptions & { copyUIDGID?: boolean; noOverwriteDirNonDir?: boolean } = {},
  ): Promise<void> {
    await this.call("PutContainerArchive", "PUT", `/containers/${encodeURIComponent(id)}/archive`, {
      ...opts,
      body: tar,
      headers: { "content-type": "application/x-tar" },
      query: { path, copyUIDGID: opts.copyUIDGID ? 1 : undefined, noOverwriteDirNonDir: opts.noOverwriteDirNonDir ? 1 : undefined },
    });
  }

  /**
   * `GET /containers/{id}/archive?path=…` — a tar of the path plus its stat (from the
   * `X-Docker-Container-Path-Stat` header). When `maxBytes` is given and the stat says the path is
   * larger, throws `HUMANISH_DOCKER_ARCHIVE_TOO_LARGE` without reading the body.
   */
  async getArchive(id: string, path: string, opts: CallOptions & { maxBytes?: number } = {}): Promise<{ tar: Uint8Array; stat: PathStat | undefined }> {
    const apiPath = `/containers/${encodeURIComponent(id)}/archive`;
    const res = await this.call("ContainerArchive", "GET", apiPath, { ...opts, query: { path } });
    const stat = parseStat(res.headers.get("x-docker-container-path-stat"));
    if (opts.maxBytes !== undefined && stat && stat.size > opts.maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw new HumanishError("HUMANISH_DOCKER_ARCHIVE_TOO_LARGE", `${path} in container ${id} is ${stat.size} bytes, over the ${opts.maxBytes}-byte bound`, {
        next: "read a smaller file or raise maxBytes",
        details: { path, size: stat.size, maxBytes: opts.maxBytes },
      });
    }
    const tar = new Uint8Array(await this.readBody("ContainerArchive", apiPath, () => res.arrayBuffer(), opts.timeoutMs ?? this.timeoutMs, opts.signal));
    return { tar, stat };
  }
}

function parseStat(header: string | null): PathStat | undefined {
  if (!header) return undefined;
  try {
    return JSON.parse(Buffer.from(header, "base64").toString("utf8")) as PathStat;
  } catch {
    return undefined;
  }
}

/** Creates a client for the given (or default) Unix socket. See `DockerClient`. */
export function createDockerClient(opts: DockerClientOptions = {}): DockerClient {
  return new DockerClient(opts);
}

/**
 * A client for the engine `env` names (see {@link resolveDockerSocket}) — what every command uses
 * with its context's env, so `DOCKER_HOST` from the environment and from `--env-file` agree.
 * @throws HumanishError `HUMANISH_DOCKER_HOST_UNSUPPORTED`.
 */
export function dockerClientFor(env: Record<string, string | undefined>, opts: Omit<DockerClientOptions, "socketPath"> = {}): DockerClient {
  return new DockerClient({ ...opts, socketPath: resolveDockerSocket(env) });
}
