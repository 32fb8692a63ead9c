/**
 * The launcher's host side without the CLI's app-server: login-shape qualification from metadata
 * and settings, native-binary resolution, the private directory and its release, recovery
 * markers against real processes, and the bounded JSON-RPC pipe against a scripted child.
 */
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { qualifyAuth } from "../../../src/actors/codex-account/auth.ts";
import { resolveNativeCodex } from "../../../src/actors/codex-account/binary.ts";
import { createPrivateDir, releasePrivateDir, writeOwner } from "../../../src/actors/codex-account/home.ts";
import { procStartTime } from "../../../src/actors/codex-account/process.ts";
import { recoveryDir, settleRecoveryMarkers, sweepAbandonedTaskDirs, writeMarker } from "../../../src/actors/codex-account/recovery.ts";
import { AppServerConnection, type RpcFatal } from "../../../src/actors/codex-account/rpc.ts";
import { codeOf, REPO_BIN } from "./support.ts";

const root = mkdtempSync(join(tmpdir(), "humanish-codex-host-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => {
  const d = join(root, `case-${++n}`);
  mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
};
const code = codeOf;
const login = (dir: string, mode = 0o600): string => {
  const p = join(dir, "auth.json");
  writeFileSync(p, "{}", { mode });
  chmodSync(p, mode);
  return p;
};

describe("login shape (metadata and settings only)", () => {
  test("a 0600 regular file, or a symlink to one, qualifies", () => {
    const d = fresh();
    const p = login(d);
    expect(qualifyAuth(p)).toEqual({ path: p, target: p });
    const other = fresh();
    const link = join(other, "auth.json");
    symlinkSync(p, link);
    expect(qualifyAuth(link).target).toBe(p);
  });
  test("keychain-only shapes are refused", () => {
    const d = fresh();
    writeFileSync(join(d, "config.toml"), 'cli_auth_credentials_store = "keyring"\n');
    expect(code(() => qualifyAuth(login(d)))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
    const a = fresh();
    writeFileSync(join(a, "config.toml"), 'cli_auth_credentials_store = "auto"\n');
    expect(code(() => qualifyAuth(join(a, "auth.json")))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
  });
  test("an API-key login forced by the operator's config is refused", () => {
    const d = fresh();
    writeFileSync(join(d, "config.toml"), 'forced_login_method = "api"\n');
    expect(code(() => qualifyAuth(login(d)))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
  });
  test("no login, a group-readable file, a directory or a dangling link are refused", () => {
    expect(code(() => qualifyAuth(join(fresh(), "auth.json")))).toBe("HUMANISH_CODEX_LOGIN_REQUIRED");
    expect(code(() => qualifyAuth(login(fresh(), 0o640)))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
    const d = fresh();
    mkdirSync(join(d, "auth.json"));
    expect(code(() => qualifyAuth(join(d, "auth.json")))).toBe("HUMANISH_CODEX_UNSUPPORTED_AUTH");
    const l = fresh();
    symlinkSync(join(l, "gone.json"), join(l, "auth.json"));
    expect(code(() => qualifyAuth(join(l, "auth.json")))).toBe("HUMANISH_CODEX_LOGIN_REQUIRED");
  });
});

describe("native binary", () => {
  test("the npm launcher on PATH resolves to the linux-x64 native ELF", () => {
    const bin = resolveNativeCodex(`relative/dir:${REPO_BIN}:/usr/bin`);
    expect(bin).toEndWith("/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
  });
  test("a script named codex, or none at all, is refused", () => {
    const d = fresh();
    writeFileSync(join(d, "codex"), "#!/bin/sh\necho codex-cli 0.171.0\n", { mode: 0o755 });
    expect(code(() => resolveNativeCodex(d))).toBe("HUMANISH_CODEX_UNAVAILABLE");
    expect(code(() => resolveNativeCodex(fresh()))).toBe("HUMANISH_CODEX_UNAVAILABLE");
  });
});

describe("private directory", () => {
  test("0700 dirs, 0600 config, a symlink to the login; removed on release", () => {
    const p = login(fresh());
    const d = createPrivateDir(p, 'model = "x"\n', fresh());
    for (const x of [d.root, d.home, d.cwd, d.scratch]) expect(statSync(x).mode & 0o777).toBe(0o700);
    expect(statSync(d.configPath).mode & 0o777).toBe(0o600);
    expect(readlinkSync(d.authLink)).toBe(p);
    expect(releasePrivateDir(d)).toEqual({ outcome: "removed" });
    expect(existsSync(d.root)).toBe(false);
    expect(readFileSync(p, "utf8")).toBe("{}");
  });
  test("a replaced login link is kept 0600 alone in its home, never copied back", () => {
    const p = login(fresh());
    const d = createPrivateDir(p, 'model = "x"\n', fresh());
    unlinkSync(d.authLink);
    writeFileSync(d.authLink, '{"refreshed":true}', { mode: 0o644 });
    writeFileSync(join(d.home, "state.sqlite"), "x");
    const r = releasePrivateDir(d);
    expect(r).toEqual({ outcome: "auth_replaced", keptFile: d.authLink });
    expect(lstatSync(d.authLink).mode & 0o777).toBe(0o600);
    expect(existsSync(join(d.home, "state.sqlite"))).toBe(false);
    expect(existsSync(d.cwd)).toBe(false);
    expect(readFileSync(p, "utf8")).toBe("{}");
  });
});

describe("recovery markers", () => {
  test("an unconfirmed child blocks new sessions until that exact process is gone", async () => {
    const env = { XDG_CACHE_HOME: fresh() };
    const p = login(fresh());
    const d = createPrivateDir(p, "x = 1\n", fresh());
    const child = Bun.spawn(["sleep", "30"], { stdout: "ignore", stderr: "ignore" });
    const startTime = procStartTime(child.pid);
    expect(startTime).not.toBeNull();
    writeMarker(env, {
      taskDirectory: d.root,
      taskDirectoryName: d.name,
      reason: "process_cleanup_unconfirmed",
      pid: child.pid,
      pidStartTime: startTime ?? "",
      authTarget: p,
    });
    expect(code(() => settleRecoveryMarkers(env))).toBe("HUMANISH_CODEX_BUSY");
    // Once that process is gone, the next start finishes the cleanup the closure could not.
    child.kill("SIGKILL");
    await child.exited;
    settleRecoveryMarkers(env);
    expect(existsSync(d.root)).toBe(false);
    expect(existsSync(join(recoveryDir(env), `${d.name}.json`))).toBe(false);
  });
  test("an auth-replacement marker blocks until the operator resolves the kept file", () => {
    const env = { XDG_CACHE_HOME: fresh() };
    const p = login(fresh());
    const d = createPrivateDir(p, "x = 1\n", fresh());
    unlinkSync(d.authLink);
    writeFileSync(d.authLink, "{}", { mode: 0o600 });
    releasePrivateDir(d);
    const marker = writeMarker(env, { taskDirectory: d.root, taskDirectoryName: d.name, reason: "unexpected_auth_replacement", authTarget: p });
    expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({
      schema: "humanish.codex-auth-recovery.v1",
      homeDirectoryName: "home",
      authFileName: "auth.json",
      reason: "unexpected_auth_replacement",
    });
    expect(code(() => settleRecoveryMarkers(env))).toBe("HUMANISH_CODEX_CLEANUP_FAILED");
    rmSync(d.authLink);
    settleRecoveryMarkers(env);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("abandoned task directories", () => {
  test("removed only when the recorded owner and child are both gone; never without an owner file", async () => {
    const env = { XDG_CACHE_HOME: fresh() };
    const tmpRoot = fresh();
    const p = login(fresh());
    const gone = Bun.spawn(["true"]);
    const goneStart = procStartTime(gone.pid) ?? "0";
    await gone.exited;
    const abandoned = createPrivateDir(p, "x = 1\n", tmpRoot);
    writeOwner(abandoned, { ownerPid: gone.pid, ownerStartTime: goneStart, childPid: gone.pid, childStartTime: goneStart, authTarget: p });
    const live = createPrivateDir(p, "x = 1\n", tmpRoot);
    writeOwner(live, { ownerPid: process.pid, ownerStartTime: procStartTime(process.pid) ?? "", authTarget: p });
    const unowned = createPrivateDir(p, "x = 1\n", tmpRoot);
    expect(sweepAbandonedTaskDirs(env, tmpRoot)).toEqual([abandoned.root]);
    expect(existsSync(abandoned.root)).toBe(false);
    expect(existsSync(live.root)).toBe(true);
    expect(existsSync(unowned.root)).toBe(true);
    expect(readFileSync(p, "utf8")).toBe("{}");
  });
});

describe("bounded JSON-RPC pipe", () => {
  const script = (body: string): string => {
    const f = join(fresh(), "child.ts");
    writeFileSync(f, body);
    return f;
  };
  const connect = (file: string, limits: Partial<ConstructorParameters<typeof AppServerConnection>[3]> = {}) => {
    const proc = Bun.spawn([process.execPath, file], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const conn = new AppServerConnection(proc.stdin, proc.stdout, proc.stderr, {
      frameBytes: 4096,
      stdoutBytes: 1 << 20,
      stderrBytes: 1024,
      notifications: 10,
      rpcMs: 2000,
      ...limits,
    });
    return { proc, conn };
  };
  test("a frame over the limit is fatal", async () => {
    const { proc, conn } = connect(script(`process.stdout.write(JSON.stringify({method:"x",params:{p:"y".repeat(10000)}})+"\\n"); await Bun.sleep(5000);`));
    const f: RpcFatal = await conn.whenFatal();
    expect(f.rule).toBe("frame_too_large");
    proc.kill("SIGKILL");
  });
  test("an unexpected server request is answered with -32601 by the host's handler", async () => {
    const { proc, conn } = connect(
      script(`process.stdout.write(JSON.stringify({id:7,method:"item/permissions/requestApproval",params:{}})+"\\n");
for await (const c of Bun.stdin.stream()) { process.stderr.write(""); process.stdout.write(JSON.stringify({method:"echo",params:{got:new TextDecoder().decode(c).trim()}})+"\\n"); }`),
    );
    conn.onServerRequest = (r) => conn.respondError(r.id, -32601, "Host request is disabled");
    const got = await new Promise<Record<string, unknown>>((res) => {
      conn.onNotification = (_m, p) => res(p);
    });
    expect(JSON.parse(String(got.got))).toEqual({ id: 7, error: { code: -32601, message: "Host request is disabled" } });
    proc.kill("SIGKILL");
  });
  test("notifications beyond the budget are fatal; an unanswered RPC times out", async () => {
    const { proc, conn } = connect(
      script(`for (let i = 0; i < 20; i++) process.stdout.write(JSON.stringify({method:"n",params:{}})+"\\n"); await Bun.sleep(5000);`),
      { rpcMs: 200 },
    );
    await expect(conn.request("never/answered", {})).rejects.toThrow(/no reply within 200 ms|notification_budget/);
    expect((await conn.whenFatal()).rule).toBe("notification_budget");
    proc.kill("SIGKILL");
  });
});
