/**
 * The wait between starting a guest container (./desktop.ts) and its browser-control socket:
 * the guest agent creates `<io>/control.sock` once its desktop is up, or writes
 * `<io>/guest-error.json` when it cannot start. The wait ends at the first of: the socket, the
 * error record, the container exiting, the caller's signal, or {@link GUEST_START_TIMEOUT_MS}.
 */
import { existsSync, readFileSync } from "node:fs";
import type { DockerClient } from "../docker/index.ts";
import { HumanishError } from "../errors.ts";

/** Deadline from container start to the guest's control socket, ms. */
export const GUEST_START_TIMEOUT_MS = 45_000;

/** The started guest a wait watches. */
export interface GuestStart {
  docker: DockerClient;
  /** Exact id of the started container. */
  containerId: string;
  /** The host io directory bound into the guest. */
  io: string;
  signal?: AbortSignal | undefined;
}

/**
 * Waits for the guest's `<io>/control.sock`, inspecting the container about once a second.
 * @throws HumanishError `HUMANISH_LOCAL_DESKTOP_START_FAILED` when the signal aborts, the guest
 *   wrote `guest-error.json`, the container exited, or {@link GUEST_START_TIMEOUT_MS} passed
 */
export async function waitForControlSocket(g: GuestStart): Promise<void> {
  const { io } = g;
  const deadline = Date.now() + GUEST_START_TIMEOUT_MS;
  let lastInspect = 0;
  while (!existsSync(`${io}/control.sock`)) {
    if (g.signal?.aborted) throw guestStartError("interrupted");
    if (existsSync(`${io}/guest-error.json`)) throw guestReportedError(io);
    if (Date.now() > deadline) throw guestStartError(`no control socket within ${GUEST_START_TIMEOUT_MS} ms`);
    if (Date.now() - lastInspect > 1000) {
      lastInspect = Date.now();
      const info = await g.docker.containerInspect(g.containerId);
      if (!info.State.Running && !existsSync(`${io}/control.sock`) && !existsSync(`${io}/guest-error.json`)) {
        throw guestStartError(`container exited with ${info.State.ExitCode}${info.State.OOMKilled ? " (out of memory)" : ""}`);
      }
    }
    await Bun.sleep(50);
  }
}

/** The start error for the guest's own `<io>/guest-error.json` record (generic when it is unreadable). */
function guestReportedError(io: string): HumanishError {
  let rec: { code?: string; message?: string; phase?: string } = {};
  try {
    rec = JSON.parse(readFileSync(`${io}/guest-error.json`, "utf8"));
  } catch {
    /* unreadable record: report generically */
  }
  return guestStartError(`${rec.code ?? "unknown"} in phase ${rec.phase ?? "unknown"}: ${rec.message ?? ""}`.trim());
}

function guestStartError(detail: string, next = "run `humanish runtime status`; see the guest container log"): HumanishError {
  return new HumanishError("HUMANISH_LOCAL_DESKTOP_START_FAILED", `guest desktop did not start: ${detail}`, { next });
}
