/**
 * Local desktop allocation (ARCHITECTURE.md "Local runtime"): one guest container per
 * participant, driven over browser control.
 *
 * Container: network `none`, `no-new-privileges`, every capability dropped, our seccomp profile
 * (runtime/seccomp/guest.json — Docker's default plus the user-namespace calls Chromium's sandbox
 * needs), 2 GiB memory (no swap), a pids limit, read-only root with tmpfs for /tmp and the home,
 * tini as init, and exactly one bind mount: a private host directory at /run/humanish-io holding
 * `config.json`, the app socket and the control socket.
 *
 * Sequence: private io dir (0700) → host app forwarder `<io>/app.sock` → real
 * `127.0.0.1:<appPort>` → create → `onCreated(id)` (the caller records the id BEFORE anything
 * else) → start → wait for `<io>/control.sock` (./guest-start.ts: 45 s, container must stay
 * running) → browser-control client (HELLO). Release is by exact id, always, with outcome
 * released | retained | unconfirmed; the io dir is removed afterwards.
 */
import { randomUUID } from "node:crypto";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import seccompProfile from "../../runtime/seccomp/guest.json";
import { type BrowserControlExecutor, type BrowserControlIdentity, createBrowserControlClient } from "../browser-control/index.ts";
import type { DockerClient } from "../docker/index.ts";
import { HumanishError } from "../errors.ts";
import { type Forwarder, startForwarder } from "../forward/forward.ts";
import { GUEST_IO_DIR } from "../guest/host-guest.ts";
import { CONTROLLER_LABEL, controllerIdentity } from "../sandbox/controller.ts";
import { releaseContainer } from "../sandbox/release.ts";
import type { ReleaseProof } from "../sandbox/types.ts";
import type { GuestImage } from "./guest-image.ts";
import { waitForControlSocket } from "./guest-start.ts";
import { connectWhenAccepting } from "./transport.ts";

export { GUEST_START_TIMEOUT_MS } from "./guest-start.ts";

/** The seccomp profile text applied to every guest container. */
export const GUEST_SECCOMP_PROFILE: string = JSON.stringify(seccompProfile);
/** Memory limit of a guest (bytes); swap is not allowed beyond it. */
export const GUEST_MEMORY_BYTES = 2 * 1024 ** 3;
/** Max processes in a guest (Chromium runs many). */
export const GUEST_PIDS_LIMIT = 512;
/** uid/gid of the guest user baked into the image. */
export const GUEST_UID = 1000;
/** Label value marking a container as a browser guest. */
export const GUEST_ROLE = "guest";

/** Options of {@link allocateDesktop}. */
export interface DesktopAllocationOptions {
  docker: DockerClient;
  image: GuestImage;
  runId: string;
  /** Participant id, stamped as a label. */
  participantId: string;
  /** The lab app's loopback port (1024–65535): where the guest's browser reaches it. */
  appPort: number;
  /**
   * The host port the app answers on, when it is not `appPort` (a statically served app binds an
   * ephemeral one): the forwarder's host side connects there.
   */
  appHostPort?: number;
  /** Path opened first (starts with `/`). */
  initialPath: string;
  /** Screen in px. */
  width: number;
  height: number;
  /** Guest lifetime cap, ms (default 20 min). */
  lifetimeMs?: number;
  /** Called with the exact container id as soon as it exists, before the container starts. */
  onCreated: (containerId: string) => void | Promise<void>;
  /** Extra labels (tests add a test-run label). Never secret. */
  labels?: Record<string, string>;
  signal?: AbortSignal;
}

/** An allocated desktop. */
export interface LocalDesktop {
  /** Exact Docker container id (64 hex). */
  readonly containerId: string;
  /** The host-side browser-control executor. */
  readonly executor: BrowserControlExecutor;
  readonly identity: BrowserControlIdentity;
  /** Screen in px. */
  readonly width: number;
  readonly height: number;
  /** Milliseconds from create to the first successful HELLO. */
  readonly startMs: number;
  /**
   * Close the channel and remove the container by its exact id (idempotent; concurrent callers
   * share one promise). `retainForDebug` leaves it running (`retained`). Never throws.
   */
  release(opts?: { retainForDebug?: boolean }): Promise<ReleaseProof>;
}

/** Host uid/gid the guest runs as: the host user when non-root, else the image's 1000:1000. */
export function guestUser(): { uid: number; gid: number } {
  const uid = process.getuid?.() ?? GUEST_UID;
  const gid = process.getgid?.() ?? GUEST_UID;
  return uid === 0 ? { uid: GUEST_UID, gid: GUEST_UID } : { uid, gid };
}

/**
 * The confinement of every guest container (see the module comment): no network, no
 * capabilities, no new privileges, our seccomp profile, memory/CPU/pids limits, read-only root
 * with private tmpfs, and `io` (a host directory) bound at {@link GUEST_IO_DIR}. Exported so a
 * bench baseline runs under exactly the same limits as a seat.
 */
export function guestHostConfig(io: string, user: { uid: number; gid: number }) {
  return {
    NetworkMode: "none",
    Init: true,
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges:true", `seccomp=${GUEST_SECCOMP_PROFILE}`],
    Memory: GUEST_MEMORY_BYTES,
    MemorySwap: GUEST_MEMORY_BYTES,
    NanoCpus: 2_000_000_000,
    PidsLimit: GUEST_PIDS_LIMIT,
    ReadonlyRootfs: true,
    ShmSize: 256 * 1024 ** 2,
    Tmpfs: {
      "/tmp": "rw,nosuid,nodev,size=256m,mode=1777",
      "/home/humanish": `rw,nosuid,nodev,size=768m,uid=${user.uid},gid=${user.gid},mode=0700`,
    },
    Binds: [`${io}:${GUEST_IO_DIR}:rw`],
  };
}

/** How long the host dials a control socket that exists but does not accept yet, ms. */
const CONTROL_DIAL_WITHIN_MS = 10_000;

/** What one allocation keeps while it starts and until it is released; every step below takes it. */
interface DesktopAllocation {
  readonly opts: DesktopAllocationOptions;
  /** Host uid/gid the guest runs as. */
  readonly user: { uid: number; gid: number };
  /** The private host directory bound at {@link GUEST_IO_DIR}. */
  readonly io: string;
  readonly identity: BrowserControlIdentity;
  forwarder?: Forwarder;
  /** The exact container id, once created. */
  containerId?: string;
  client?: ReturnType<typeof createBrowserControlClient>;
  /** The one release in progress or done. */
  releasing?: Promise<ReleaseProof>;
}

/**
 * Allocate one guest desktop and open browser control to it.
 * @throws HumanishError `HUMANISH_LOCAL_DESKTOP_START_FAILED` (the container, if created, has
 *   already been released by id and `onCreated` has run), `HUMANISH_DOCKER_*` engine errors.
 */
export async function allocateDesktop(opts: DesktopAllocationOptions): Promise<LocalDesktop> {
  const { docker } = opts;
  checkAppPort(opts.appPort);
  if (opts.appHostPort !== undefined) checkAppPort(opts.appHostPort);
  const user = guestUser();
  const io = mkdtempSync(join(tmpdir(), "humanish-gd-"));
  if (process.getuid?.() === 0) chownSync(io, user.uid, user.gid);
  const identity: BrowserControlIdentity = { generation: randomUUID(), challenge: randomUUID(), runtimeRevision: opts.image.runtimeRevision };
  const s: DesktopAllocation = { opts, user, io, identity };
  const release = (r: { retainForDebug?: boolean } = {}): Promise<ReleaseProof> => releaseDesktop(s, r);
  const t0 = performance.now();
  try {
    await prepareIo(s);
    const containerId = await createGuestContainer(s);
    s.containerId = containerId;
    await opts.onCreated(containerId);
    await docker.containerStart(containerId);
    await waitForControlSocket({ docker, containerId, io, signal: opts.signal });
    const transport = await connectWhenAccepting(`${io}/control.sock`, CONTROL_DIAL_WITHIN_MS, opts.signal);
    const client = createBrowserControlClient({ transport, identity });
    s.client = client;
    await client.ready();
    const startMs = performance.now() - t0;
    return {
      containerId,
      executor: client.executor,
      identity,
      width: opts.width,
      height: opts.height,
      startMs,
      release,
    };
  } catch (e) {
    await release();
    throw e;
  }
}

/**
 * Refuses an app port outside 1024–65535.
 * @throws HumanishError HUMANISH_LAB_INVALID
 */
function checkAppPort(appPort: number): void {
  if (!Number.isInteger(appPort) || appPort < 1024 || appPort > 65535) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `app port ${appPort} must be a loopback port in 1024–65535`, {
      next: "serve the app on a port above 1023",
    });
  }
}

/**
 * Fills the io dir: the forwarder `<io>/app.sock` → `127.0.0.1:<appHostPort ?? appPort>` (kept in `s` as soon
 * as it listens) and the guest's `config.json` (0600), both owned by the guest user when we are root.
 */
async function prepareIo(s: DesktopAllocation): Promise<void> {
  const { opts, io, user } = s;
  s.forwarder = await startForwarder({ path: `${io}/app.sock` }, { host: "127.0.0.1", port: opts.appHostPort ?? opts.appPort });
  if (process.getuid?.() === 0) chownSync(`${io}/app.sock`, user.uid, user.gid);
  writeFileSync(
    `${io}/config.json`,
    JSON.stringify({
      schema: "humanish.guest-config.v1",
      identity: s.identity,
      appPort: opts.appPort,
      initialPath: opts.initialPath,
      width: opts.width,
      height: opts.height,
      lifetimeMs: opts.lifetimeMs ?? 20 * 60_000,
    }),
    { mode: 0o600 },
  );
  if (process.getuid?.() === 0) chownSync(`${io}/config.json`, user.uid, user.gid);
}

/** Creates (does not start) the guest container, labelled and confined; returns its exact id. */
async function createGuestContainer(s: DesktopAllocation): Promise<string> {
  const { opts, io, user } = s;
  const created = await opts.docker.containerCreate({
    Image: opts.image.ref,
    User: `${user.uid}:${user.gid}`,
    Labels: {
      ...(opts.labels ?? {}),
      "humanish.owner": "humanish",
      "humanish.run": opts.runId,
      "humanish.role": GUEST_ROLE,
      "humanish.participant": opts.participantId,
      [CONTROLLER_LABEL]: controllerIdentity(),
    },
    NetworkDisabled: true,
    StopSignal: "SIGTERM",
    HostConfig: guestHostConfig(io, user),
  });
  return created.Id;
}

/**
 * Closes the channel and the forwarder, then removes the container by its exact id (or keeps it,
 * `retained`, with `retainForDebug`), then the io dir. One release per allocation: later calls
 * share its promise. Never throws.
 */
function releaseDesktop(s: DesktopAllocation, r: { retainForDebug?: boolean }): Promise<ReleaseProof> {
  s.releasing ??= (async () => {
    try {
      s.client?.close();
    } catch {
      /* closing never undoes input; the container goes next */
    }
    await s.forwarder?.close().catch(() => undefined);
    let proof: ReleaseProof;
    if (!s.containerId) proof = { id: "none", provider: "docker", outcome: "released", reason: "no container was created", at: new Date().toISOString() };
    else if (r.retainForDebug)
      proof = { id: s.containerId, provider: "docker", outcome: "retained", reason: "retained for debugging", at: new Date().toISOString() };
    else proof = await releaseContainer(s.opts.docker, s.containerId);
    rmSync(s.io, { recursive: true, force: true });
    return proof;
  })();
  return s.releasing;
}
