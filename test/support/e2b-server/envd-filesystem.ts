/**
 * envd's files API (`GET /files`, `POST /files`) and filesystem service
 * (`filesystem.Filesystem/{Stat,ListDir,MakeDir,Move,Remove}` over unary Connect JSON) for one
 * sandbox. Reads and writes go through the project's Docker sandbox (the archive endpoints);
 * the filesystem calls run coreutils/findutils inside the container as the requesting user.
 *
 * Relative paths resolve against the user's home, as in envd. Written files are owned by the
 * image's default user whoever asked (the archive endpoint sets one owner). Directory watching
 * (`WatchDir`, watchers) is not emulated and answers `unimplemented`.
 */
import { posix } from "node:path";
import { HumanishError } from "../../../src/errors.ts";
import { unaryError } from "./connect-json.ts";
import type { SandboxRecord } from "./containers.ts";
import { requestUser } from "./envd-process.ts";

/** Largest file `GET /files` serves, bytes (64 MiB). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

/** Home of a user the way E2B lays them out. */
export function homeOf(user: string | undefined): string {
  return !user || user === "user" ? "/home/user" : user === "root" ? "/root" : `/home/${user}`;
}

/** Absolute, normalised form of `path` for `user`. */
export function resolvePath(path: string, user: string | undefined): string {
  return posix.normalize(path.startsWith("/") ? path : posix.join(homeOf(user), path));
}

const fileError = (status: number, message: string) => Response.json({ code: status, message }, { status });

/** Serves `GET`/`POST /files`. */
export async function filesApi(req: Request, sandbox: SandboxRecord): Promise<Response> {
  const url = new URL(req.url);
  const user = url.searchParams.get("username") || requestUser(req);
  const raw = url.searchParams.get("path");
  if (req.method === "GET") {
    if (!raw) return fileError(400, "path is required");
    const path = resolvePath(raw, user);
    try {
      const bytes = await sandbox.container.readFile(path, MAX_READ_BYTES);
      return new Response(bytes, { headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) } });
    } catch (e) {
      const code = e instanceof HumanishError ? e.code : "";
      if (code === "HUMANISH_SANDBOX_FILE_NOT_FOUND") return fileError(404, `path '${path}' does not exist`);
      if (code === "HUMANISH_SANDBOX_FILE_NOT_REGULAR") return fileError(400, `path '${path}' is not a file`);
      return fileError(500, (e as Error).message);
    }
  }
  if (req.method !== "POST") return fileError(405, `method ${req.method} not allowed on /files`);
  const uploads: { path: string; data: Uint8Array }[] = [];
  if ((req.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
    const form = await req.formData();
    for (const part of form.getAll("file")) {
      if (typeof part === "string") return fileError(400, "multipart part 'file' must be a file");
      const target = raw ?? part.name;
      if (!target) return fileError(400, "path is required (query or part file name)");
      uploads.push({ path: resolvePath(target, user), data: new Uint8Array(await part.arrayBuffer()) });
    }
  } else {
    if (!raw) return fileError(400, "path is required");
    let data = new Uint8Array(await req.arrayBuffer());
    if (req.headers.get("content-encoding") === "gzip") data = Bun.gunzipSync(data);
    uploads.push({ path: resolvePath(raw, user), data });
  }
  if (uploads.length === 0) return fileError(400, "no file in the request");
  for (const u of uploads) {
    try {
      await sandbox.container.writeFile(u.path, u.data);
    } catch (e) {
      return fileError(500, (e as Error).message);
    }
  }
  return Response.json(uploads.map((u) => ({ name: posix.basename(u.path), type: "file", path: u.path })));
}

// One record per entry, fields and records NUL-separated, so any file name survives.
const FIND_FORMAT = "%y\\0%s\\0%m\\0%M\\0%u\\0%g\\0%T@\\0%l\\0%p\\0";
const TYPES: Record<string, string> = { f: "FILE_TYPE_FILE", d: "FILE_TYPE_DIRECTORY", l: "FILE_TYPE_SYMLINK" };

/** Parses `find -printf FIND_FORMAT` output into protocol `EntryInfo`s. Pure. */
export function parseEntries(out: string): Record<string, unknown>[] {
  const f = out.split("\0");
  const entries: Record<string, unknown>[] = [];
  for (let i = 0; i + 9 <= f.length; i += 9) {
    const [type = "", size, mode = "0", perms, owner, group, mtime, link, path = ""] = f.slice(i, i + 9);
    entries.push({
      name: posix.basename(path),
      type: TYPES[type] ?? "FILE_TYPE_UNSPECIFIED",
      path,
      size: size,
      mode: Number.parseInt(mode, 8),
      permissions: perms,
      owner,
      group,
      modifiedTime: new Date(Number(mtime) * 1000).toISOString(),
      ...(link ? { symlinkTarget: link } : {}),
    });
  }
  return entries;
}

async function run(sandbox: SandboxRecord, user: string | undefined, script: string, ...args: string[]) {
  const r = await sandbox.container.exec({ cmd: ["/bin/sh", "-c", script, "envd-fs", ...args], ...(user ? { user } : {}), timeoutMs: 30_000 });
  return { exitCode: r.exitCode, stdout: new TextDecoder().decode(r.stdout), stderr: new TextDecoder().decode(r.stderr).trim() };
}

const STAT = `find -- "$1" -maxdepth 0 -printf '${FIND_FORMAT}'`;

/** Serves `POST /filesystem.Filesystem/<method>`. */
export async function filesystemService(req: Request, method: string, sandbox: SandboxRecord): Promise<Response> {
  let msg: Record<string, unknown>;
  try {
    msg = (await req.json()) as Record<string, unknown>;
  } catch {
    return unaryError("invalid_argument", "request body must be JSON");
  }
  const user = requestUser(req);
  const pathOf = (v: unknown) => (typeof v === "string" && v ? resolvePath(v, user) : undefined);
  const path = pathOf(msg.path);
  const missing = () => unaryError("not_found", `path '${path}' does not exist`);
  if (method === "Stat") {
    if (!path) return unaryError("invalid_argument", "path is required");
    const r = await run(sandbox, user, STAT, path);
    return r.exitCode === 0 ? Response.json({ entry: parseEntries(r.stdout)[0] }) : missing();
  }
  if (method === "ListDir") {
    if (!path) return unaryError("invalid_argument", "path is required");
    const depth = typeof msg.depth === "number" && msg.depth > 0 ? msg.depth : 1;
    const r = await run(sandbox, user, `[ -d "$1" ] || exit 3; find -- "$1" -mindepth 1 -maxdepth "$2" -printf '${FIND_FORMAT}'`, path, String(depth));
    if (r.exitCode === 3) return missing();
    if (r.exitCode !== 0) return unaryError("internal", r.stderr);
    return Response.json({ entries: parseEntries(r.stdout) });
  }
  if (method === "MakeDir") {
    if (!path) return unaryError("invalid_argument", "path is required");
    const r = await run(sandbox, user, `[ -e "$1" ] && exit 17; mkdir -p -- "$1" && ${STAT}`, path);
    if (r.exitCode === 17) return Response.json({ code: "already_exists", message: `path '${path}' already exists` }, { status: 409 });
    return r.exitCode === 0 ? Response.json({ entry: parseEntries(r.stdout)[0] }) : unaryError("internal", r.stderr);
  }
  if (method === "Remove") {
    if (!path) return unaryError("invalid_argument", "path is required");
    const r = await run(sandbox, user, `[ -e "$1" ] || [ -L "$1" ] || exit 3; rm -rf -- "$1"`, path);
    if (r.exitCode === 3) return missing();
    return r.exitCode === 0 ? Response.json({}) : unaryError("internal", r.stderr);
  }
  if (method === "Move") {
    const source = pathOf(msg.source);
    const destination = pathOf(msg.destination);
    if (!source || !destination) return unaryError("invalid_argument", "source and destination are required");
    const r = await run(sandbox, user, `[ -e "$1" ] || exit 3; mv -- "$1" "$2" && set -- "$2" && ${STAT}`, source, destination);
    if (r.exitCode === 3) return unaryError("not_found", `path '${source}' does not exist`);
    return r.exitCode === 0 ? Response.json({ entry: parseEntries(r.stdout)[0] }) : unaryError("internal", r.stderr);
  }
  return unaryError("unimplemented", `filesystem.Filesystem/${method} is not emulated by this server`);
}
