/**
 * A host-side stand-in for E2B's egress proxy: `allowOut` enforced with a deny-all fallback, and
 * header transforms for the hosts a test maps to local upstreams
 * (`upstreams: { "api.openai.com": "http://127.0.0.1:<fake model port>" }`).
 *
 * How it works: the server makes one internal Docker network (no route out of the host) and
 * listens for TCP on that network's gateway address, port 443. A deny-all sandbox joins that
 * network, with `/etc/hosts` entries pointing every host it may reach at the listener (an
 * unrestricted sandbox keeps Docker's default bridge and gets entries for the upstream hosts
 * only). A network update (`PUT /sandboxes/{id}/network`) places the sandbox again the same
 * way, registers its new address and cuts the connections it opened under the old rules. The
 * listener reads the TLS ClientHello's server name (./sni.ts), matches the connection
 * to its sandbox by source address and checks the name against that sandbox's `allowOut`. An
 * upstream host's connection is handed to a TLS terminator holding a leaf certificate signed by a
 * test CA made for this server (appended to the sandbox's `/etc/ssl/certs/ca-certificates.crt`),
 * which injects the rule's headers — replacing the in-sandbox placeholder credential — and
 * forwards to the upstream, streaming the response back. Any other allowed host is tunnelled
 * byte for byte to the real host on port 443, its TLS untouched, as E2B does for hosts without a
 * transform.
 *
 * What differs from E2B: wildcard `allowOut` entries reach only the upstream hosts under them
 * (there is no DNS to answer for the rest); only HTTPS on port 443 leaves a deny-all sandbox;
 * the client sees this test CA, not E2B's; the host's own services listening on all addresses
 * stay reachable from the sandbox network. The log keeps header names only, never values.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { hostAddressOn } from "../docker-network.ts";
import { requireBinary } from "../prereq.ts";
import { allowsHost, applyHeaders, type EgressPolicy, transformHeaders } from "./egress-policy.ts";
import { engine } from "./engine.ts";
import { sniOf } from "./sni.ts";

/** One request the proxy saw. Header values are never kept. */
export interface EgressRecord {
  sandboxId: string | undefined;
  host: string;
  method: string;
  path: string;
  /**
   * `forwarded` (an upstream host: the upstream answered `status`), `tunnelled` (another allowed
   * host: TLS passed through untouched, `method` `CONNECT`), `denied` (not allowed, unknown source,
   * no server name), `failed` (upstream or host unreachable).
   */
  outcome: "forwarded" | "tunnelled" | "denied" | "failed";
  status: number;
  /** Names of the headers the sandbox's rules injected. */
  injected: string[];
}

/** Where a sandbox is placed on the network, for the sandbox provider. */
export interface Placement {
  network: "none" | "bridge";
  dockerNetwork?: string;
  extraHosts: string[];
}

/** A test CA and a leaf certificate for `hosts`, all PEM. Made with the openssl CLI in a private temp dir, removed at once. */
export function makeCertificates(hosts: string[]): { caPem: string; certPem: string; keyPem: string } {
  const openssl = requireBinary("openssl", "openssl");
  const dir = mkdtempSync(join(tmpdir(), "humanish-e2b-egress-"));
  try {
    const run = (...args: string[]) => {
      const r = spawnSync(openssl, args, { cwd: dir, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
    };
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    run(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "2",
      "-subj",
      "/CN=humanish local E2B egress test CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    );
    run("req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", `/CN=${hosts[0]}`);
    writeFileSync(
      join(dir, "leaf.ext"),
      `subjectAltName=${hosts.map((h) => `DNS:${h}`).join(",")}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`,
    );
    run("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "leaf.ext", "-out", "leaf.pem");
    return {
      caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
      certPem: readFileSync(join(dir, "leaf.pem"), "utf8"),
      keyPem: readFileSync(join(dir, "leaf.key"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "content-length"];

/** The egress proxy of one server. */
export class EgressProxy {
  readonly records: EgressRecord[] = [];
  private readonly bySource = new Map<string, { sandboxId: string; policy: EgressPolicy }>();
  /** Connections the listener handed to the terminator, by the listener-side port, so the terminator knows the sandbox. */
  private readonly viaListener = new Map<number, { sandboxId: string; policy: EgressPolicy }>();
  private readonly networkName = `humanish-e2b-egress-${crypto.randomUUID()}`;
  private networkId: string | undefined;
  private gateway: Promise<string> | undefined;
  private listener: Server | undefined;
  private terminator: ReturnType<typeof Bun.serve> | undefined;
  private caPem: string | undefined;
  private readonly sockets = new Set<Socket>();
  /** Open client connections of each sandbox, cut when its rules change or it ends. */
  private readonly bySandbox = new Map<string, Set<Socket>>();
  /** Sandboxes whose system bundle already trusts the test CA. */
  private readonly trusted = new Set<string>();

  /** @param upstreams host name → upstream base URL (`http://127.0.0.1:8080`); hosts lowercased. */
  constructor(
    private readonly upstreams: Record<string, string>,
    private readonly labels: Record<string, string>,
  ) {}

  /** Makes the network, the certificates, the terminator and the listener once, on first use. */
  private ensure(): Promise<string> {
    this.gateway ??= this.start();
    return this.gateway;
  }

  private async start(): Promise<string> {
    const hosts = Object.keys(this.upstreams);
    if (hosts.length > 0) {
      const certs = makeCertificates(hosts);
      this.caPem = certs.caPem;
      this.terminator = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        tls: { cert: certs.certPem, key: certs.keyPem },
        fetch: (req, server) => this.forward(req, this.viaListener.get(server.requestIP(req)?.port ?? -1)),
      });
    }
    const created = await engine("/networks/create", {
      method: "POST",
      body: JSON.stringify({ Name: this.networkName, Internal: true, CheckDuplicate: true, Labels: this.labels }),
    });
    if (created.status !== 201) throw new Error(`egress: network create failed (${created.status}): ${JSON.stringify(created.body)}`);
    this.networkId = (created.body as { Id: string }).Id;
    const gateway = await hostAddressOn(this.networkId);
    const listener = createServer((client) => this.route(client));
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(443, gateway, () => resolve());
    });
    this.listener = listener;
    return gateway;
  }

  /** Where a sandbox with `policy` goes: which network, and which host names point at the proxy. */
  async placement(policy: EgressPolicy): Promise<Placement> {
    const upstreamHosts = Object.keys(this.upstreams).filter((h) => allowsHost(policy, h));
    if (!policy.denyAll) {
      if (upstreamHosts.length === 0) return { network: "bridge", extraHosts: [] };
      const gateway = await this.ensure();
      return { network: "bridge", extraHosts: upstreamHosts.map((h) => `${h}:${gateway}`) };
    }
    const hosts = [...new Set([...upstreamHosts, ...policy.allowHosts.filter((h) => !h.startsWith("*."))])];
    if (hosts.length === 0) return { network: "none", extraHosts: [] };
    const gateway = await this.ensure();
    // On the internal network nothing but this host answers: the deny-all fallback holds.
    return { network: "none", dockerNetwork: this.networkName, extraHosts: hosts.map((h) => `${h}:${gateway}`) };
  }

  /**
   * Registers a placed sandbox by its address and, when there are upstream hosts, installs the
   * test CA into its system bundle once per sandbox (as root; the bundle is root's file, so no
   * capability is needed). Throws when that fails.
   */
  async attach(sandboxId: string, container: Sandbox, policy: EgressPolicy, address: string): Promise<void> {
    if (this.caPem && !this.trusted.has(sandboxId)) {
      const r = await container.exec({
        cmd: ["/bin/sh", "-c", 'printf "%s\\n" "$1" >> /etc/ssl/certs/ca-certificates.crt', "install-ca", this.caPem],
        user: "root",
        timeoutMs: 30_000,
      });
      if (r.exitCode !== 0) throw new Error(`egress: installing the test CA in sandbox ${sandboxId} failed: ${new TextDecoder().decode(r.stderr)}`);
      this.trusted.add(sandboxId);
    }
    this.bySource.set(address, { sandboxId, policy });
  }

  /**
   * Forgets a sandbox's address and cuts its open connections: its container is gone, or its
   * rules are being replaced (a tunnel opened under the old rules must not outlive them).
   * `ended` also forgets that it trusts the test CA.
   */
  detach(sandboxId: string, ended = true): void {
    for (const [addr, s] of this.bySource) if (s.sandboxId === sandboxId) this.bySource.delete(addr);
    for (const socket of this.bySandbox.get(sandboxId) ?? []) socket.destroy();
    this.bySandbox.delete(sandboxId);
    if (ended) this.trusted.delete(sandboxId);
  }

  /** Reads the ClientHello's server name, checks it, and hands the connection to the terminator or the real host. */
  private route(client: Socket): void {
    const source = (client.remoteAddress ?? "").replace(/^::ffff:/, "");
    const who = this.bySource.get(source);
    let hello = new Uint8Array(0);
    this.sockets.add(client);
    if (who) {
      const open = this.bySandbox.get(who.sandboxId) ?? new Set<Socket>();
      open.add(client);
      this.bySandbox.set(who.sandboxId, open);
    }
    client.on("close", () => {
      this.sockets.delete(client);
      if (who) this.bySandbox.get(who.sandboxId)?.delete(client);
    });
    client.on("error", () => client.destroy());
    const onData = (chunk: Buffer) => {
      const joined = new Uint8Array(hello.length + chunk.length);
      joined.set(hello);
      joined.set(chunk, hello.length);
      hello = joined;
      const sni = sniOf(hello);
      if (sni === "incomplete" && hello.length < 65_536) return;
      client.off("data", onData);
      client.pause();
      const host = typeof sni === "object" ? sni.host : undefined;
      const base = { sandboxId: who?.sandboxId, host: host ?? "", method: "CONNECT", path: "", injected: [] as string[] };
      if (!who || !host || !allowsHost(who.policy, host)) {
        this.records.push({ ...base, outcome: "denied", status: 0 });
        client.destroy();
        return;
      }
      const upstream = this.upstreams[host];
      const target = upstream && this.terminator ? { host: "127.0.0.1", port: Number(this.terminator.port) } : { host, port: 443 };
      const out = connect(target.port, target.host, () => {
        if (upstream) this.viaListener.set(out.localPort ?? -1, who);
        else this.records.push({ ...base, outcome: "tunnelled", status: 0 });
        out.write(hello);
        client.pipe(out);
        out.pipe(client);
        client.resume();
      });
      out.on("error", () => {
        if (!upstream) this.records.push({ ...base, outcome: "failed", status: 0 });
        client.destroy();
      });
      out.on("close", () => {
        this.viaListener.delete(out.localPort ?? -1);
        client.destroy();
      });
      client.on("close", () => out.destroy());
    };
    client.on("data", onData);
  }

  private async forward(req: Request, who: { sandboxId: string; policy: EgressPolicy } | undefined): Promise<Response> {
    const url = new URL(req.url);
    const host = (req.headers.get("host") ?? url.hostname).replace(/:\d+$/, "").toLowerCase();
    const base = { sandboxId: who?.sandboxId, host, method: req.method, path: url.pathname };
    const upstream = this.upstreams[host];
    // The Host header must name an allowed upstream too: a client may not reuse the TLS session for another host.
    if (!who || !upstream || !allowsHost(who.policy, host)) {
      this.records.push({ ...base, outcome: "denied", status: 403, injected: [] });
      return new Response(`egress to ${host} denied by the sandbox's network rules\n`, { status: 403 });
    }
    const inject = transformHeaders(who.policy, host);
    const headers = applyHeaders(req.headers, inject);
    for (const h of HOP_BY_HOP) headers.delete(h);
    // Ask for identity so the body streams through byte for byte.
    headers.set("accept-encoding", "identity");
    try {
      const res = await fetch(new URL(url.pathname + url.search, upstream), {
        method: req.method,
        headers,
        ...(req.body ? { body: req.body, duplex: "half" } : {}),
        redirect: "manual",
      } as RequestInit);
      this.records.push({ ...base, outcome: "forwarded", status: res.status, injected: Object.keys(inject) });
      const out = new Headers(res.headers);
      for (const h of ["content-encoding", "content-length", "transfer-encoding", "connection"]) out.delete(h);
      return new Response(res.body, { status: res.status, headers: out });
    } catch (e) {
      this.records.push({ ...base, outcome: "failed", status: 502, injected: Object.keys(inject) });
      return new Response(`egress upstream for ${host} failed: ${(e as Error).message}\n`, { status: 502 });
    }
  }

  /** Stops the listener and the terminator and removes the network (after every container on it is gone). */
  async close(): Promise<void> {
    // Open tunnels would keep the listener from closing.
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.listener ? this.listener.close(() => resolve()) : resolve()));
    this.terminator?.stop(true);
    if (this.networkId) {
      const r = await engine(`/networks/${this.networkId}`, { method: "DELETE" });
      if (r.status !== 204 && r.status !== 404)
        throw new Error(`egress: network ${this.networkId} could not be removed (${r.status}): ${JSON.stringify(r.body)}`);
    }
  }
}
