/**
 * The private task directory: `<tmp>/humanish-codex-account-<random>/` (0700) with `home/` (the
 * private CODEX_HOME), `cwd/` and `scratch/` (all 0700), a `home/config.toml` (0600, created
 * exclusively) and `home/auth.json` — a symlink to the operator's login, never a copy.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Name prefix of private task directories under the temp root. */
export const TASK_DIR_PREFIX = "humanish-codex-account-";
/** File in the task directory naming its owner process and child (pid + start time): how an abandoned directory is recognised. */
export const OWNER_FILE = "owner.json";

/** Who a task directory belongs to; both must be gone before anyone else may remove it. */
export interface TaskOwner {
  ownerPid: number;
  ownerStartTime: string;
  childPid?: number;
  childStartTime?: string;
  authTarget: string;
}

/** Records (or updates) the owner of a task directory. */
export function writeOwner(d: PrivateDir, owner: TaskOwner): void {
  writeFileSync(join(d.root, OWNER_FILE), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
}

/** Reads a task directory's owner, or null when absent or unreadable. */
export function readOwner(root: string): TaskOwner | null {
  try {
    const o = JSON.parse(readFileSync(join(root, OWNER_FILE), "utf8")) as TaskOwner;
    return typeof o?.ownerPid === "number" && typeof o.authTarget === "string" ? o : null;
  } catch {
    return null;
  }
}

/** The paths of one private task directory. */
export interface PrivateDir {
  root: string;
  name: string;
  home: string;
  cwd: string;
  scratch: string;
  configPath: string;
  authLink: string;
  authTarget: string;
}

/** Creates the private directory and links the login. The caller removes it with {@link releasePrivateDir}. */
export function createPrivateDir(authTarget: string, configToml: string, tmpRoot: string = tmpdir()): PrivateDir {
  const root = mkdtempSync(join(tmpRoot, TASK_DIR_PREFIX));
  chmodSync(root, 0o700);
  const d: PrivateDir = {
    root,
    name: root.slice(root.lastIndexOf("/") + 1),
    home: join(root, "home"),
    cwd: join(root, "cwd"),
    scratch: join(root, "scratch"),
    configPath: join(root, "home", "config.toml"),
    authLink: join(root, "home", "auth.json"),
    authTarget,
  };
  try {
    for (const p of [d.home, d.cwd, d.scratch]) mkdirSync(p, { mode: 0o700 });
    writeFileSync(d.configPath, configToml, { mode: 0o600, flag: "wx" });
    symlinkSync(authTarget, d.authLink);
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  return d;
}

/** The state of the private login link: still our symlink, replaced by something else, or gone. */
export function inspectAuthLink(link: string, target: string): "intact" | "replaced" | "missing" {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(link);
  } catch {
    return "missing";
  }
  if (st.isSymbolicLink() && readlinkSync(link) === target) return "intact";
  return "replaced";
}

/** How the private directory was given back. */
export type PrivateDirRelease = { outcome: "removed" } | { outcome: "auth_replaced"; keptFile: string };

/**
 * Removes the private directory after a confirmed child exit. A replaced login link is kept:
 * the file is made 0600 (0700 home) and everything else is deleted; nothing is copied back.
 */
export function releasePrivateDir(d: PrivateDir): PrivateDirRelease {
  if (inspectAuthLink(d.authLink, d.authTarget) !== "replaced") {
    rmSync(d.root, { recursive: true, force: true });
    return { outcome: "removed" };
  }
  const st = lstatSync(d.authLink);
  if (!st.isSymbolicLink()) chmodSync(d.authLink, 0o600);
  chmodSync(d.home, 0o700);
  for (const n of readdirSync(d.root)) if (n !== "home") rmSync(join(d.root, n), { recursive: true, force: true });
  for (const n of readdirSync(d.home)) if (n !== "auth.json") rmSync(join(d.home, n), { recursive: true, force: true });
  return { outcome: "auth_replaced", keptFile: d.authLink };
}
