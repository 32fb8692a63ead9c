/**
 * Launching the restricted app-server: private directory, scrubbed environment, the native
 * binary at the pinned version, and the readiness handshake (initialize, effective config,
 * login shape, MCP servers) — all before any thread or model turn exists.
 */
import { realpathSync } from "node:fs";
import type { Subprocess } from "bun";
import { HumanishError } from "../../errors.ts";
import { authPathFor, qualifyAuth } from "./auth.ts";
import { probeVersion, resolveNativeCodex } from "./binary.ts";
import type { CodexAccountBounds } from "./bounds.ts";
import { checkEffectiveConfig, renderToml, restrictedConfig } from "./config.ts";
import { createPrivateDir, type PrivateDir, writeOwner } from "./home.ts";
import { type ChildIdentity, procStartTime } from "./process.ts";
import { settleRecoveryMarkers, sweepAbandonedTaskDirs } from "./recovery.ts";
import { AppServerConnection, RpcError } from "./rpc.ts";
import { currentTestProviderFacts, resolveTestProvider, TEST_PROVIDER_ID } from "./test-provider.ts";
import type { CodexAccountProfile } from "./types.ts";

type Json = Record<string, unknown>;

/** The PATH the child gets: system directories only (it runs no shell and needs no operator tools). */
export const CHILD_PATH = "/usr/local/bin:/usr/bin:/bin";

/** A launched, handshaken app-server. */
export interface LaunchedAppServer {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  child: ChildIdentity;
  conn: AppServerConnection;
  dir: PrivateDir;
  /** `openai`, or the test override's id. */
  modelProvider: string;
}

/** The child's whole environment: nothing inherited but locale and user names. */
export function childEnv(dir: PrivateDir, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = { HOME: dir.home, CODEX_HOME: dir.home, TMPDIR: dir.scratch, PATH: CHILD_PATH, LANG: env.LANG || "C.UTF-8" };
  for (const k of ["USER", "LOGNAME"] as const) {
    const v = env[k];
    if (v && /^[A-Za-z0-9._-]{1,64}$/.test(v)) out[k] = v;
  }
  return out;
}

/** Pre-launch qualification facts (no process started). */
export interface Prelaunch {
  binary: string;
  authTarget: string;
  testProviderUrl: string | null;
}

/**
 * Everything checkable without a process: the recovery markers, the test-override rule, the
 * login shape, the native binary.
 */
export function prelaunch(env: Record<string, string | undefined>, authPath: string | undefined): Prelaunch {
  const testProviderUrl = resolveTestProvider(currentTestProviderFacts(env));
  settleRecoveryMarkers(env);
  sweepAbandonedTaskDirs(env);
  const auth = qualifyAuth(authPathFor(env, authPath));
  const binary = resolveNativeCodex(env.PATH);
  return { binary, authTarget: auth.target, testProviderUrl };
}

function fail(code: string, phase: string, message: string, next?: string): HumanishError {
  return new HumanishError(code, `Codex app-server ${phase}: ${message}`, { ...(next ? { next } : {}), details: { failurePhase: phase } });
}

async function rpc<T>(conn: AppServerConnection, phase: string, method: string, params: unknown, ms: number): Promise<T> {
  try {
    return await conn.request<T>(method, params, ms);
  } catch (e) {
    if (e instanceof RpcError)
      throw fail("HUMANISH_CODEX_PROTOCOL_ERROR", phase, `${method} failed: ${e.message}`, "Check that the pinned Codex CLI is installed unmodified.");
    throw e;
  }
}

/**
 * Creates the private directory, checks the version, spawns `codex app-server --strict-config`
 * and runs the readiness handshake. On any failure the caller must close `proc` and release `dir`
 * — this function hands both back inside the error's `details.launched` so nothing leaks.
 */
export async function launchAppServer(
  pre: Prelaunch,
  profile: CodexAccountProfile,
  bounds: CodexAccountBounds,
  env: Record<string, string | undefined>,
): Promise<LaunchedAppServer> {
  const cfg = restrictedConfig(profile, pre.testProviderUrl);
  const dir = createPrivateDir(pre.authTarget, renderToml(cfg));
  const owner = { ownerPid: process.pid, ownerStartTime: procStartTime(process.pid) ?? "", authTarget: pre.authTarget };
  writeOwner(dir, owner);
  const cenv = childEnv(dir, env);
  let launched: LaunchedAppServer | undefined;
  try {
    const version = await probeVersion(pre.binary, cenv);
    if (version !== profile.cliVersion)
      throw fail(
        "HUMANISH_CODEX_UNSUPPORTED_VERSION",
        "startup",
        `${pre.binary} is codex-cli ${version}, not the qualified ${profile.cliVersion}`,
        `npm install --global @openai/codex@${profile.cliVersion}`,
      );
    const proc = Bun.spawn([pre.binary, "app-server", "--strict-config"], { cwd: dir.cwd, env: cenv, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const startTime = procStartTime(proc.pid) ?? "";
    writeOwner(dir, { ...owner, childPid: proc.pid, childStartTime: startTime });
    const conn = new AppServerConnection(proc.stdin, proc.stdout, proc.stderr, bounds);
    void proc.exited.then(() => conn.stop({ rule: "process_exited", detail: `the app-server exited (${proc.exitCode ?? proc.signalCode})` }));
    launched = { proc, child: { pid: proc.pid, startTime }, conn, dir, modelProvider: pre.testProviderUrl ? TEST_PROVIDER_ID : "openai" };
    await withDeadline(handshake(launched, cfg, profile, bounds), bounds.startupMs);
    return launched;
  } catch (e) {
    const err = e instanceof HumanishError ? e : fail("HUMANISH_CODEX_PROCESS_FAILED", "startup", (e as Error).message);
    (err as { launched?: unknown }).launched = launched ?? { dir };
    throw err;
  }
}

async function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(fail("HUMANISH_CODEX_PROCESS_FAILED", "startup", `readiness took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

async function handshake(l: LaunchedAppServer, cfg: Json, profile: CodexAccountProfile, bounds: CodexAccountBounds): Promise<void> {
  const { conn, dir } = l;
  const init = await rpc<Json>(
    conn,
    "initialize",
    "initialize",
    { clientInfo: { name: "humanish_analysis", title: null, version: "1.0.0" }, capabilities: { experimentalApi: true, requestAttestation: false } },
    bounds.rpcMs,
  );
  const home = realpathSync(dir.home);
  if (typeof init.userAgent !== "string" || !init.userAgent.includes(`/${profile.cliVersion} `))
    throw fail("HUMANISH_CODEX_UNSUPPORTED_VERSION", "initialize", `the app-server's user agent does not name codex ${profile.cliVersion}`);
  if (init.codexHome !== home && init.codexHome !== dir.home)
    throw fail("HUMANISH_CODEX_UNSAFE_CONFIGURATION", "initialize", `the app-server uses CODEX_HOME ${String(init.codexHome)}, not the private home`);
  if (init.platformOs !== "linux" || init.platformFamily !== "unix")
    throw fail("HUMANISH_CODEX_UNSUPPORTED_PLATFORM", "initialize", `the app-server runs on ${String(init.platformOs)}/${String(init.platformFamily)}`);
  conn.notify("initialized", {});
  const cr = await rpc<Json>(conn, "config/read", "config/read", { includeLayers: true, cwd: dir.cwd }, bounds.rpcMs);
  const problems = checkEffectiveConfig(cr, cfg, dir.configPath);
  if (problems.length > 0)
    throw fail(
      "HUMANISH_CODEX_UNSAFE_CONFIGURATION",
      "config/read",
      problems.slice(0, 8).join("; "),
      "Remove system-wide Codex settings (/etc/codex/config.toml) or managed configuration; humanish runs Codex only with its own private config.",
    );
  // Asked without the token: the reply names the login method only.
  const auth = await rpc<Json>(conn, "account/read", "getAuthStatus", { includeToken: false, refreshToken: false }, bounds.rpcMs);
  if (auth.authToken !== null && auth.authToken !== undefined)
    throw fail("HUMANISH_CODEX_PROTOCOL_ERROR", "account/read", "the app-server returned a token although none was asked for");
  // With forced_login_method = "chatgpt" the app-server reports no method for a login file that
  // holds anything but ChatGPT tokens (an API key, typically): the file exists, so it is the shape.
  if (auth.authMethod === null || auth.authMethod === undefined)
    throw fail(
      "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      "account/read",
      "the linked auth.json holds no ChatGPT login (an API-key login, or one Codex cannot use)",
      "Run `codex login` and choose ChatGPT, or use an API-key provider instead.",
    );
  if (auth.authMethod !== "chatgpt")
    throw fail(
      "HUMANISH_CODEX_UNSUPPORTED_AUTH",
      "account/read",
      `the login is ${String(auth.authMethod)}, not a ChatGPT account (an API-key login is refused for Codex account seats)`,
      "Run `codex login` and choose ChatGPT, or use an API-key provider instead.",
    );
  const mcp = await rpc<Json>(conn, "mcpServerStatus/list", "mcpServerStatus/list", { limit: 100 }, bounds.rpcMs);
  if (!Array.isArray(mcp.data) || mcp.data.length > 0 || (mcp.nextCursor !== null && mcp.nextCursor !== undefined))
    throw fail("HUMANISH_CODEX_UNSAFE_CONFIGURATION", "mcpServerStatus/list", "the app-server reports MCP servers");
}
