/**
 * The sandboxes of the local E2B-compatible server: each one a real Docker container made by the
 * project's Docker sandbox provider (hardened, labelled, released by exact id), plus what E2B keeps
 * about it (template, metadata, env, timeout, network) and its envd process table.
 *
 * A network update moves the running container for real: it leaves and joins Docker networks
 * (Docker's bridge for an unrestricted sandbox, the egress proxy's internal network for a deny-all
 * one that allows some hosts, none at all for deny-all), its `/etc/hosts` entries for the proxy
 * are rewritten, and the proxy enforces the new rules from then on.
 *
 * Timeouts are enforced: every sandbox has an end time (`timeout` seconds after create, or after
 * the last `setTimeout`/`connect`), and when it passes the container is removed for real — E2B's
 * `onTimeout: "kill"`. Pausing is not emulated, so a create asking for `onTimeout: "pause"` is refused.
 */
import { randomBytes } from "node:crypto";
import type { DockerClient } from "../../../src/docker/index.ts";
import { createDockerSandboxProvider } from "../../../src/sandbox/index.ts";
import type { ReleaseProof, Sandbox } from "../../../src/sandbox/types.ts";
import { type EgressPolicy, egressPolicy } from "./egress-policy.ts";
import type { EgressProxy, Placement } from "./egress-proxy.ts";
import { networkConnect } from "./engine.ts";
import { hostsEdit, type NetworkConfig, rewiring } from "./network-update.ts";
import { ProcessTable } from "./processes.ts";

/** A template: the Docker image a sandbox of it runs, and its size. */
export interface TemplateSpec {
  image: string;
  /** Memory limit, bytes (default 1 GiB). */
  memoryBytes?: number;
  /** CPU limit, CPUs (default 1). */
  cpus?: number;
  /** Process limit (default 1024: a desktop session runs a few hundred). */
  pidsLimit?: number;
  /** /dev/shm size, bytes (default the engine's). */
  shmBytes?: number;
  /** Seccomp profile JSON text (default the project's sandbox profile). */
  seccompProfile?: string;
}

/** The fields of a `POST /v2/sandboxes` body this server acts on (the whole body is kept too). */
export interface CreateBody {
  templateID: string;
  timeout?: number;
  metadata?: Record<string, string>;
  envVars?: Record<string, string>;
  allow_internet_access?: boolean;
  network?: Record<string, unknown>;
  autoPause?: boolean;
  secure?: boolean;
}

/** One sandbox the server made. */
export interface SandboxRecord {
  /** E2B-style sandbox id (20 lowercase letters and digits). */
  readonly id: string;
  readonly templateID: string;
  /** Exact Docker container id. */
  readonly containerId: string;
  readonly container: Sandbox;
  readonly processes: ProcessTable;
  readonly body: CreateBody;
  readonly startedAt: Date;
  endAt: Date;
  /** Token envd requires in `X-Access-Token` when the sandbox is secure. */
  readonly envdAccessToken: string | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The network config now in force (create's, or the last update's), echoed by `GET /sandboxes/{id}`. */
  network: NetworkConfig;
  /** The `/etc/hosts` entries (`host:address`) now pointing hosts at the egress proxy. */
  extraHosts: string[];
  /** The network update in progress (updates of one sandbox run one at a time). */
  networkChange: Promise<void>;
}

/** How a sandbox stopped existing. */
export interface SandboxEnd {
  sandboxId: string;
  why: "killed" | "expired" | "server-closed";
  proof: ReleaseProof;
}

/** The capabilities a sandbox's root keeps, as a real E2B root has them: chown, chmod and write any file. */
export const E2B_ROOT_FILE_CAPS = ["CHOWN", "FOWNER", "DAC_OVERRIDE"] as const;

/** Default sandbox lifetime, seconds (E2B's default). */
export const DEFAULT_TIMEOUT_S = 300;
/** Longest lifetime accepted, seconds (E2B's Pro limit). */
export const MAX_TIMEOUT_S = 86_400;

/** A request the registry refuses, with the HTTP status the control plane answers. */
export class CreateRefused extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** Registry of live sandboxes, with real containers behind them. */
export class SandboxRegistry {
  private readonly live = new Map<string, SandboxRecord>();
  private readonly containerIds = new Map<string, string>();
  private readonly ending = new Map<string, Promise<ReleaseProof>>();
  /** Every end, in order (killed, expired, or removed at close). */
  readonly ends: SandboxEnd[] = [];
  private readonly provider;

  /** @param egress the egress proxy (placement of each sandbox on the network, the test CA); none keeps Docker's none/bridge. */
  constructor(
    private readonly docker: DockerClient,
    private readonly templates: Record<string, () => Promise<TemplateSpec>>,
    private readonly labels: Record<string, string>,
    private readonly egress?: EgressProxy,
  ) {
    this.provider = createDockerSandboxProvider({ docker });
  }

  /** Whether `id` names a template of this server (for the template lookup; nothing is resolved or built). */
  hasTemplate(id: string): boolean {
    return Object.hasOwn(this.templates, id);
  }

  /**
   * Makes a sandbox from `body`. Throws `CreateRefused` (404 unknown template, 400 a bad timeout or
   * a pause lifecycle) or the provider's `HumanishError` when the container cannot be made.
   */
  async create(body: CreateBody): Promise<SandboxRecord> {
    const resolve = Object.hasOwn(this.templates, body.templateID) ? this.templates[body.templateID] : undefined;
    if (!resolve) throw new CreateRefused(404, `template '${body.templateID}' not found (known: ${Object.keys(this.templates).join(", ")})`);
    const timeout = body.timeout ?? DEFAULT_TIMEOUT_S;
    if (!Number.isInteger(timeout) || timeout < 0 || timeout > MAX_TIMEOUT_S) {
      throw new CreateRefused(400, `timeout must be a whole number of seconds between 0 and ${MAX_TIMEOUT_S} (got ${body.timeout})`);
    }
    if (body.autoPause === true) throw new CreateRefused(400, "onTimeout 'pause' is not emulated by this server: create with onTimeout 'kill'");
    const spec = await resolve();
    const id = sandboxId();
    const policy = egressPolicy(body);
    const place = await this.placement(policy);
    const container = await this.provider.create({
      runId: `e2b-${id}`,
      image: spec.image,
      network: place.network,
      ...(place.dockerNetwork ? { dockerNetwork: place.dockerNetwork } : {}),
      extraHosts: place.extraHosts,
      memoryBytes: spec.memoryBytes ?? 1024 ** 3,
      cpus: spec.cpus ?? 1,
      pidsLimit: spec.pidsLimit ?? 1024,
      ...(spec.shmBytes !== undefined ? { shmBytes: spec.shmBytes } : {}),
      ...(spec.seccompProfile !== undefined ? { seccompProfile: spec.seccompProfile } : {}),
      // An E2B sandbox is a VM whose root owns every file in it: an install step may chown or
      // chmod what the participant user owns. Only those file-ownership capabilities come back
      // (never --privileged); no-new-privileges and the seccomp profile still hold.
      rootFileCaps: E2B_ROOT_FILE_CAPS,
      labels: { ...this.labels, "humanish.e2b-sandbox": id },
    });
    try {
      await this.attachEgress(id, container, policy, place);
    } catch (e) {
      await container.release();
      throw e;
    }
    const now = new Date();
    const record: SandboxRecord = {
      id,
      templateID: body.templateID,
      containerId: container.id,
      container,
      processes: new ProcessTable(container, body.envVars ?? {}),
      body,
      startedAt: now,
      endAt: now,
      envdAccessToken: body.secure === true ? randomBytes(24).toString("hex") : undefined,
      timer: undefined,
      network: {
        ...(body.allow_internet_access !== undefined ? { allow_internet_access: body.allow_internet_access } : {}),
        ...(body.network ? { network: body.network } : {}),
      },
      extraHosts: place.extraHosts,
      networkChange: Promise.resolve(),
    };
    this.live.set(id, record);
    this.containerIds.set(id, container.id);
    // Timed from the same instant as `startedAt`, so the info's end is exactly `timeout` after it.
    this.setTimeout(id, timeout, now.getTime());
    return record;
  }

  /** Where a sandbox with `policy` goes on the network (without the proxy: Docker's none or bridge). */
  private placement(policy: EgressPolicy): Promise<Placement> {
    return this.egress ? this.egress.placement(policy) : Promise.resolve({ network: policy.denyAll ? "none" : "bridge", extraHosts: [] });
  }

  /** Registers a placed container with the egress proxy by its address, when the proxy serves any host for it. */
  private async attachEgress(id: string, container: Sandbox, policy: EgressPolicy, place: Placement): Promise<void> {
    if (!this.egress || place.extraHosts.length === 0) return;
    const nets = (await this.docker.containerInspect(container.id)).NetworkSettings?.Networks ?? {};
    const address = nets[place.dockerNetwork ?? "bridge"]?.IPAddress;
    if (!address) throw new Error(`container ${container.id} has no address on ${place.dockerNetwork ?? "bridge"}`);
    await this.egress.attach(id, container, policy, address);
  }

  /**
   * Replaces a live sandbox's network config with `next` and moves its container to match:
   * Docker networks left and joined (confirmed by inspecting the container), `/etc/hosts`
   * rewritten, the proxy told the new address and rules, and connections opened under the old
   * rules cut. The config shown by `GET /sandboxes/{id}` changes only once all of that is done.
   * Returns false when the sandbox is not live; throws (with what failed) when the engine
   * refuses a step, leaving the old config shown — a half-moved container is never more open
   * than either config, since the proxy forgets it before it moves.
   */
  async updateNetwork(id: string, next: NetworkConfig): Promise<boolean> {
    const r = this.live.get(id);
    if (!r) return false;
    const run = r.networkChange.then(() => this.move(r, next));
    r.networkChange = run.catch(() => undefined);
    await run;
    return true;
  }

  private async move(r: SandboxRecord, next: NetworkConfig): Promise<void> {
    const policy = egressPolicy(next);
    const place = await this.placement(policy);
    const desired = place.dockerNetwork ? [place.dockerNetwork] : place.network === "bridge" ? ["bridge"] : [];
    const attached = async () => Object.keys((await this.docker.containerInspect(r.containerId)).NetworkSettings?.Networks ?? {});
    this.egress?.detach(r.id, false);
    const plan = rewiring(await attached(), desired);
    for (const n of plan.disconnect) await this.docker.networkDisconnect(n, r.containerId, { force: true });
    for (const n of plan.connect) await networkConnect(n, r.containerId);
    const now = await attached();
    if (now.length !== desired.length || !desired.every((n) => now.includes(n))) {
      throw new Error(`container ${r.containerId} is on [${now.join(", ")}], not [${desired.join(", ")}]`);
    }
    const edit = hostsEdit(r.extraHosts, place.extraHosts);
    if (edit) {
      const res = await r.container.exec({ cmd: edit, user: "root", cwd: "/", timeoutMs: 30_000 });
      if (res.exitCode !== 0) throw new Error(`rewriting /etc/hosts in sandbox ${r.id} failed: ${new TextDecoder().decode(res.stderr)}`);
      r.extraHosts = place.extraHosts;
    }
    await this.attachEgress(r.id, r.container, policy, place);
    r.network = next;
  }

  get(id: string): SandboxRecord | undefined {
    return this.live.get(id);
  }

  /** Live sandboxes, oldest first. */
  list(): SandboxRecord[] {
    return [...this.live.values()];
  }

  /** Container id of a sandbox this server made (also after it ended). */
  containerIdOf(id: string): string | undefined {
    return this.containerIds.get(id);
  }

  /** Re-arms the sandbox's end to `seconds` after `from` (epoch ms, default now). Returns false when it is not live. */
  setTimeout(id: string, seconds: number, from = Date.now()): boolean {
    const r = this.live.get(id);
    if (!r) return false;
    clearTimeout(r.timer);
    r.endAt = new Date(from + seconds * 1000);
    r.timer = setTimeout(() => void this.end(id, "expired"), Math.max(0, r.endAt.getTime() - Date.now()));
    return true;
  }

  /**
   * Removes the sandbox's container by exact id and forgets it. Returns the release proof, or
   * undefined when the sandbox is not live. A sandbox whose container could not be confirmed gone
   * stays live (and listed), so the fault is visible.
   */
  async end(id: string, why: SandboxEnd["why"]): Promise<ReleaseProof | undefined> {
    const r = this.live.get(id);
    if (!r) return undefined;
    // A timeout firing while a DELETE is removing the container joins that removal.
    const pending = this.ending.get(id);
    if (pending) return pending;
    clearTimeout(r.timer);
    // An expired sandbox is gone for the API at once, as in E2B (lookups and kills answer 404
    // while its container is still being removed); it is listed again if the removal fails.
    if (why === "expired") this.live.delete(id);
    const removal = r.container.release().then((proof) => {
      if (proof.outcome === "released") {
        this.live.delete(id);
        this.egress?.detach(id);
      } else if (why === "expired") this.live.set(id, r);
      this.ends.push({ sandboxId: id, why, proof });
      return proof;
    });
    this.ending.set(id, removal);
    try {
      return await removal;
    } finally {
      this.ending.delete(id);
    }
  }

  /** Ends every live sandbox (server close). Returns the proofs. */
  async closeAll(): Promise<ReleaseProof[]> {
    const proofs: ReleaseProof[] = [];
    for (const id of [...this.live.keys()]) {
      const p = await this.end(id, "server-closed");
      if (p) proofs.push(p);
    }
    return proofs;
  }
}

/** An id shaped like E2B's: 20 characters of [a-z0-9]. */
function sandboxId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(20)].map((b) => alphabet[b % alphabet.length]).join("");
}
