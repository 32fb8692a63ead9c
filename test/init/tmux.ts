/**
 * Drives a program under a real pseudo-terminal with tmux, as a person would: type text, press
 * keys, read the screen. Each driver uses its own tmux server socket (`-L`), so tests never
 * touch anyone else's tmux sessions; `close()` kills only that server.
 */
import { randomBytes } from "node:crypto";
import { requireBinary } from "../support/prereq.ts";

/** One program running in a tmux pane. */
export interface TmuxDriver {
  /** Types literal text (no key names interpreted). */
  type(text: string): Promise<void>;
  /** Presses tmux key names, e.g. `Enter`, `Down`, `Escape`, `C-c`, `BSpace`. */
  press(...keys: string[]): Promise<void>;
  /** The visible screen plus scrollback, as text. */
  screen(): Promise<string>;
  /** Waits until the screen contains `text` (or matches it), else throws with the screen. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Kills this driver's tmux server (its only session). */
  close(): Promise<void>;
}

async function tmux(socket: string, args: string[]): Promise<string> {
  const bin = requireBinary("tmux", "tmux");
  const p = Bun.spawn([bin, "-L", socket, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`tmux ${args[0]} failed (${code}): ${err}`);
  return out;
}

/**
 * Starts `command` (a shell command line) in a fresh detached tmux session of `cols`×`rows`,
 * with `env` exported. The session stays open after the command ends (`remain-on-exit`).
 */
export async function startInTmux(command: string, opts: { cwd: string; env?: Record<string, string>; cols?: number; rows?: number }): Promise<TmuxDriver> {
  const socket = `humanish-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const session = "wizard";
  const exports = Object.entries({ TERM: "xterm-256color", LANG: "C.UTF-8", ...(opts.env ?? {}) })
    .map(([k, v]) => `export ${k}=${shellQuote(v)};`)
    .join(" ");
  await tmux(socket, [
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    String(opts.cols ?? 160),
    "-y",
    String(opts.rows ?? 50),
    "-c",
    opts.cwd,
    `${exports} ${command}`,
  ]);
  await tmux(socket, ["set-option", "-t", session, "remain-on-exit", "on"]);
  await tmux(socket, ["set-option", "-t", session, "history-limit", "5000"]);
  const driver: TmuxDriver = {
    async type(text) {
      await tmux(socket, ["send-keys", "-t", session, "-l", text]);
      await Bun.sleep(60);
    },
    async press(...keys) {
      for (const k of keys) {
        await tmux(socket, ["send-keys", "-t", session, k]);
        await Bun.sleep(60);
      }
    },
    screen() {
      return tmux(socket, ["capture-pane", "-p", "-J", "-S", "-", "-t", session]);
    },
    async waitFor(text, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        last = await driver.screen();
        if (typeof text === "string" ? last.includes(text) : text.test(last)) return last;
        await Bun.sleep(80);
      }
      throw new Error(`timed out waiting for ${String(text)}; screen:\n${last}`);
    },
    async close() {
      try {
        await tmux(socket, ["kill-server"]);
      } catch {
        // already gone
      }
    },
  };
  return driver;
}

/** Single-quotes a value for a POSIX shell. */
export function shellQuote(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}
