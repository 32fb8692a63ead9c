/**
 * Pure parts of `PUT /sandboxes/{id}/network`: reading the update body into the sandbox's new
 * network config, the Docker networks to leave and join, and the `/etc/hosts` edit that points the
 * newly allowed hosts at the egress proxy. No I/O; the registry (./containers.ts) carries them out.
 *
 * As in E2B, an update replaces the whole egress config: a field it leaves out is cleared, so
 * `{}` gives an unrestricted sandbox again.
 */
import type { NetworkBody } from "./egress-policy.ts";

/** The network config E2B keeps for a sandbox: what create set, or what the last update replaced it with. */
export interface NetworkConfig {
  allow_internet_access?: boolean;
  network?: NetworkBody;
}

const KNOWN = new Set(["allow_internet_access", "allowOut", "denyOut", "rules", "egressProxy"]);

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((e) => typeof e === "string");
const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks one host's rule list; returns a message naming the field (never a header value), or undefined when valid. */
function ruleProblem(host: string, list: unknown): string | undefined {
  if (host === "*" || host.length === 0) return `rules: '${host}' is not a host name or a '*.suffix' wildcard`;
  if (!Array.isArray(list)) return `rules['${host}'] must be a list of rules`;
  for (const [i, rule] of list.entries()) {
    if (!isPlain(rule)) return `rules['${host}'][${i}] must be an object`;
    const t = rule.transform;
    if (t === undefined) continue;
    if (!isPlain(t)) return `rules['${host}'][${i}].transform must be an object`;
    const h = t.headers;
    if (h !== undefined && (!isPlain(h) || !Object.values(h).every((v) => typeof v === "string"))) {
      return `rules['${host}'][${i}].transform.headers must map header names to strings`;
    }
  }
  return undefined;
}

/**
 * Reads a `SandboxNetworkUpdateConfig` body into the sandbox's new config: rule keys lowercased,
 * only the fields given kept. Returns a message naming the bad field (for a 400; never a header
 * value) when the body is malformed, names an unknown field, or asks for `egressProxy`, which
 * this server does not emulate.
 */
export function readNetworkUpdate(body: unknown): NetworkConfig | string {
  if (body === undefined) return {};
  if (!isPlain(body)) return "the body must be a JSON object";
  const unknown = Object.keys(body).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) return `unknown field(s): ${unknown.join(", ")}`;
  if (body.egressProxy !== undefined) return "egressProxy is not emulated by this server";
  const { allow_internet_access: access, allowOut, denyOut, rules } = body;
  if (access !== undefined && typeof access !== "boolean") return "allow_internet_access must be a boolean";
  if (allowOut !== undefined && !isStringList(allowOut)) return "allowOut must be a list of strings";
  if (denyOut !== undefined && !isStringList(denyOut)) return "denyOut must be a list of strings";
  if (rules !== undefined && !isPlain(rules)) return "rules must map host names to rule lists";
  const network: NetworkBody = {};
  if (allowOut !== undefined) network.allowOut = [...allowOut];
  if (denyOut !== undefined) network.denyOut = [...denyOut];
  if (rules !== undefined) {
    const out: NonNullable<NetworkBody["rules"]> = {};
    for (const [host, list] of Object.entries(rules)) {
      const problem = ruleProblem(host, list);
      if (problem) return problem;
      out[host.toLowerCase()] = list as NonNullable<NetworkBody["rules"]>[string];
    }
    network.rules = out;
  }
  return {
    ...(access !== undefined ? { allow_internet_access: access } : {}),
    ...(Object.keys(network).length > 0 ? { network } : {}),
  };
}

/** Docker networks to leave and to join so a container on `current` ends up on exactly `desired`. */
export function rewiring(current: readonly string[], desired: readonly string[]): { disconnect: string[]; connect: string[] } {
  return { disconnect: current.filter((n) => !desired.includes(n)), connect: desired.filter((n) => !current.includes(n)) };
}

/**
 * The root command that rewrites `/etc/hosts` in place (it is a bind mount, so it cannot be
 * replaced): lines naming a host of `before` are dropped and the `after` entries appended, each
 * `host:address` as Docker's `ExtraHosts` takes them. Undefined when nothing changes. Host names
 * and the file travel as arguments, never inside the script.
 */
export function hostsEdit(before: readonly string[], after: readonly string[], file = "/etc/hosts"): string[] | undefined {
  if (before.length === after.length && before.every((e, i) => e === after[i])) return undefined;
  const split = (entry: string) => {
    const at = entry.lastIndexOf(":");
    return { host: entry.slice(0, at), address: entry.slice(at + 1) };
  };
  const drop = [...new Set([...before, ...after].map((e) => split(e).host))].join(" ");
  const add = after.map((e) => `${split(e).address}\t${split(e).host}\n`).join("");
  const script =
    'kept=$(awk -v drop="$1" \'BEGIN { n = split(drop, d, " "); for (i = 1; i <= n; i++) skip[d[i]] = 1 } { keep = 1; for (i = 2; i <= NF; i++) if ($i in skip) keep = 0; if (keep) print }\' "$3") && printf "%s\\n%s" "$kept" "$2" > "$3"';
  return ["/bin/sh", "-c", script, "hosts-edit", drop, add, file];
}
