/**
 * `humanish guest serve` — the guest agent (ARCHITECTURE.md "Browser control"; the
 * guest agent of a desktop session, run inside a container): read `<io>/config.json`, forward the app port
 * into `<io>/app.sock`, boot Xvfb + Chromium, open the initial URL, then listen on
 * `<io>/control.sock` for exactly one host connection and run the browser-control dispatcher
 * over it until the channel ends or the lifetime cap fires. Boot failures are written to
 * `<io>/guest-error.json` (code, message, phase — never page content) and stderr.
 */
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { attachBrowserControlDispatcher, createSocketTransport } from "../browser-control/index.ts";
import { HumanishError, isHumanishError } from "../errors.ts";
import { type Forwarder, startForwarder } from "../forward/forward.ts";
import { bootDesktop, type GuestDesktop } from "./desktop.ts";
import { GUEST_IO_DIR, GUEST_LISTENING_MARKER, parseGuestConfig } from "./host-guest.ts";

/** Options of {@link runGuestServe}. */
export interface GuestServeOptions {
  /** Private io directory (default {@link GUEST_IO_DIR}). */
  ioDir?: string;
  /** Writable home (default `$HOME` or `/home/humanish`). */
  home?: string;
  /** The image's own runtime revision (default `$HUMANISH_RUNTIME_REVISION`); the config must match it. */
  runtimeRevision?: string;
  /** Line sink for the marker (default stdout). */
  log?: (line: string) => void;
}

/**
 * Run the guest agent until the host channel ends. Resolves with the process exit code:
 * 0 after a normal channel end, 2 on a boot or configuration failure.
 */
export async function runGuestServe(opts: GuestServeOptions = {}): Promise<number> {
  const io = opts.ioDir ?? GUEST_IO_DIR;
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const ownRevision = opts.runtimeRevision ?? process.env.HUMANISH_RUNTIME_REVISION;
  let forwarder: Forwarder | undefined;
  let desktop: GuestDesktop | undefined;
  const authority = new AbortController();
  let phase = "config";
  try {
    const config = parseGuestConfig(readFileSync(`${io}/config.json`, "utf8"));
    if (ownRevision && config.identity.runtimeRevision !== ownRevision) {
      throw new HumanishError("HUMANISH_GUEST_REVISION_MISMATCH", "config.json names a different runtime revision than this guest image", {
        next: "rebuild or reselect the guest image with `humanish runtime setup`",
      });
    }
    phase = "forward";
    forwarder = await startForwarder({ host: "127.0.0.1", port: config.appPort }, { path: `${io}/app.sock` });
    phase = "desktop";
    desktop = await bootDesktop({
      width: config.width,
      height: config.height,
      initialUrl: `http://127.0.0.1:${config.appPort}${config.initialPath}`,
      home: opts.home ?? process.env.HOME ?? "/home/humanish",
      onTerminal: () => authority.abort(),
    });
    phase = "listen";
    const controlPath = `${io}/control.sock`;
    rmSync(controlPath, { force: true });
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(controlPath, () => resolve());
    });
    chmodSync(controlPath, 0o600);
    log(GUEST_LISTENING_MARKER);
    const lifetime = setTimeout(() => authority.abort(), config.lifetimeMs);
    const socket = await Promise.race([
      accepted,
      new Promise<never>((_, reject) =>
        authority.signal.addEventListener(
          "abort",
          () => reject(new HumanishError("HUMANISH_GUEST_ENDED", "desktop ended before the host connected", { next: "see the guest log" })),
          { once: true },
        ),
      ),
    ]);
    server.close();
    phase = "serve";
    const transport = createSocketTransport(socket);
    const ended = new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      authority.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    const dispatcher = attachBrowserControlDispatcher({
      transport,
      identity: config.identity,
      executor: desktop.executor,
      isAuthorized: () => !authority.signal.aborted && !desktop!.executor.terminal,
      authoritySignal: authority.signal,
    });
    await ended;
    clearTimeout(lifetime);
    authority.abort();
    dispatcher.close();
    socket.destroy();
    return 0;
  } catch (e) {
    const err = isHumanishError(e) ? e : new HumanishError("HUMANISH_GUEST_BOOT_FAILED", `guest ${phase} failed`, { next: "see the guest log" });
    const record = { schema: "humanish.guest-error.v1", code: err.code, message: err.message, phase: (err.details?.phase as string | undefined) ?? phase };
    try {
      writeFileSync(`${io}/guest-error.json`, JSON.stringify(record), { mode: 0o600 });
    } catch {
      /* the io dir is gone: stderr still has it */
    }
    process.stderr.write(`humanish guest serve failed: ${err.message}\ncode: ${err.code}\n`);
    return 2;
  } finally {
    authority.abort();
    await desktop?.close();
    await forwarder?.close();
  }
}
