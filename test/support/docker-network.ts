/**
 * The host's address on a Docker network, asked in a way every engine version answers.
 *
 * The engine's IPAM entry is not a reliable source: dockerd 20.10 leaves `Gateway` empty for the
 * default `bridge` network (only `Subnet` is filled in) while it fills it in for user-defined
 * networks. What does hold everywhere is that a bridge network's gateway is an address the host
 * itself holds on the bridge interface, inside the network's subnet. So the subnet comes from the
 * engine and the address from the host's own interfaces (`ip -j -4 addr`, iproute2; Node's
 * `networkInterfaces()` omits an interface with no carrier, which `docker0` is while no container
 * is attached).
 */
import { engine } from "./e2b-server/engine.ts";
import { requireBinary } from "./prereq.ts";

interface IpamConfig {
  Subnet?: string;
  Gateway?: string;
}

/** One IPv4 address the host holds: interface name and dotted address. */
export interface HostAddress {
  ifname: string;
  address: string;
}

/** Every IPv4 address on this host's interfaces, up or down. Throws when `ip` is missing or fails. */
export function hostIpv4Addresses(): HostAddress[] {
  const ip = requireBinary("ip", "iproute2");
  const r = Bun.spawnSync([ip, "-j", "-4", "addr", "show"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`\`ip -j -4 addr show\` failed (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
  const links = JSON.parse(r.stdout.toString()) as { ifname: string; addr_info?: { family?: string; local?: string }[] }[];
  return links.flatMap((l) => (l.addr_info ?? []).filter((a) => a.family === "inet" && a.local).map((a) => ({ ifname: l.ifname, address: a.local as string })));
}

/** The IPv4 address as a 32-bit unsigned number, or null when `s` is not a dotted quad. */
function ipv4(s: string): number | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = n * 256 + Number(p);
  }
  return n;
}

/** Whether dotted IPv4 `address` lies inside CIDR `subnet` (e.g. `172.17.0.0/16`); false for IPv6 subnets. */
export function inSubnet(address: string, subnet: string): boolean {
  const [base, bitsText] = subnet.split("/");
  const a = ipv4(address);
  const b = ipv4(base ?? "");
  const bits = Number(bitsText);
  if (a === null || b === null || !Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(a / size) === Math.floor(b / size);
}

/**
 * The IPv4 address this host holds on Docker network `network` (name or id): where a container on
 * that network reaches the host, and where a host service binds so only such containers (and the
 * host) reach it. When the engine names a gateway it must be one of the host's addresses.
 * Throws naming the network and its subnet when the engine does not know the network, when it has
 * no IPv4 subnet, or when no host interface is inside it (an engine on another machine, or a
 * driver other than bridge).
 */
export async function hostAddressOn(network: string): Promise<string> {
  const info = await engine(`/networks/${encodeURIComponent(network)}`);
  if (info.status !== 200) throw new Error(`Docker network ${network}: inspect answered ${info.status}: ${JSON.stringify(info.body)}`);
  const configs = ((info.body as { IPAM?: { Config?: IpamConfig[] | null } }).IPAM?.Config ?? []).filter(
    (c) => c.Subnet && ipv4(c.Subnet.split("/")[0] ?? "") !== null,
  );
  if (configs.length === 0) throw new Error(`Docker network ${network} has no IPv4 subnet in its IPAM config: no host address to reach it at`);
  const host = hostIpv4Addresses();
  for (const c of configs) {
    const inside = host.filter((h) => inSubnet(h.address, c.Subnet as string));
    if (c.Gateway) {
      if (inside.some((h) => h.address === c.Gateway)) return c.Gateway;
      throw new Error(
        `Docker network ${network}: the engine names gateway ${c.Gateway}, which no interface of this host holds (is the engine on another machine?)`,
      );
    }
    if (inside.length === 1) return (inside[0] as HostAddress).address;
    if (inside.length > 1)
      throw new Error(
        `Docker network ${network} (${c.Subnet}): several host addresses inside it (${inside.map((h) => `${h.ifname} ${h.address}`).join(", ")}) and no gateway named`,
      );
  }
  throw new Error(
    `Docker network ${network} (${configs.map((c) => c.Subnet).join(", ")}): no interface of this host holds an address inside it (is the engine on another machine, or the network not a bridge?)`,
  );
}
