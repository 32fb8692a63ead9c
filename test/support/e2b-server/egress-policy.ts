/**
 * E2B's egress rules, read from a create body's `network` (and `allow_internet_access`), as pure
 * decisions: whether the sandbox is deny-all, whether a host name is allowed out, and which header
 * transform applies to a request for a host. No I/O.
 *
 * The rules as E2B states them: `allowOut` entries win over `denyOut`; `denyOut: ["0.0.0.0/0"]` or
 * `allow_internet_access: false` denies everything not allowed; `rules` keys are exact names or
 * `*.suffix` wildcards (subdomains at any depth, never the apex), exact first, then the longest
 * wildcard, never merged; a rule does not grant access by itself. Only host names are routed by
 * this server, so IP and CIDR entries of `allowOut`/`denyOut` other than `0.0.0.0/0` are ignored.
 */

/** The `network` object of a create body, as the SDK sends it. */
export interface NetworkBody {
  allowOut?: string[];
  denyOut?: string[];
  rules?: Record<string, { transform?: { headers?: Record<string, string> } }[]>;
}

/** Egress policy of one sandbox. */
export interface EgressPolicy {
  /** True when everything not in `allowOut` is denied. */
  denyAll: boolean;
  /** Host-name entries of `allowOut`, lowercased. */
  allowHosts: string[];
  rules: NetworkBody["rules"];
}

/** Reads the policy of a create body. */
export function egressPolicy(body: { allow_internet_access?: boolean; network?: unknown }): EgressPolicy {
  const net = (body.network ?? {}) as NetworkBody;
  const denyAll = body.allow_internet_access === false || (net.denyOut ?? []).includes("0.0.0.0/0");
  const allowHosts = (net.allowOut ?? []).filter((e) => /[a-z]/i.test(e) && !e.includes("/")).map((e) => e.toLowerCase());
  return { denyAll, allowHosts, rules: net.rules };
}

/** True when `pattern` (exact name or `*.suffix`) matches `host`; a wildcard never matches its apex. */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return p === h;
}

/** True when the policy lets the sandbox reach `host`. */
export function allowsHost(policy: EgressPolicy, host: string): boolean {
  if (!policy.denyAll) return true;
  return policy.allowHosts.some((p) => hostMatches(p, host));
}

/** Headers the rules inject for `host`: the exact key's rules, else the longest matching wildcard's. */
export function transformHeaders(policy: EgressPolicy, host: string): Record<string, string> {
  const rules = policy.rules ?? {};
  const h = host.toLowerCase();
  let key = Object.keys(rules).find((k) => k.toLowerCase() === h);
  if (key === undefined) {
    const wild = Object.keys(rules)
      .filter((k) => k.startsWith("*.") && hostMatches(k, h))
      .sort((a, b) => b.length - a.length);
    key = wild[0];
  }
  const out: Record<string, string> = {};
  for (const rule of key !== undefined ? (rules[key] ?? []) : []) Object.assign(out, rule.transform?.headers ?? {});
  return out;
}

/** `headers` with `inject` set, an existing header of the same name (any case) replaced. */
export function applyHeaders(headers: Headers, inject: Record<string, string>): Headers {
  const out = new Headers(headers);
  for (const [k, v] of Object.entries(inject)) out.set(k, v);
  return out;
}
