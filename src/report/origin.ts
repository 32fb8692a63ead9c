/**
 * The one rule every loopback server of humanish applies to a request before anything else
 * (the run library and the Observer): its `Host` must name this server's own loopback address
 * and port, and a present `Origin` must be that same origin. A page on another site that rebinds
 * its DNS name to 127.0.0.1 reaches the port with its own name in `Host` and its own origin in
 * `Origin`, so both checks defeat DNS rebinding without any authentication on loopback.
 */

/** The `Host` values of a loopback server on `port`: `127.0.0.1:<port>` and `localhost:<port>`. */
export function loopbackHosts(port: number): ReadonlySet<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
}

/**
 * Why `req` is not addressed to this loopback server on `port`, or null when it is:
 * `host` — the Host header is missing or names another host or port; `origin` — an Origin
 * header is present and is not `http://127.0.0.1:<port>` or `http://localhost:<port>`.
 */
export function foreignRequest(req: Request, port: number): "host" | "origin" | null {
  const hosts = loopbackHosts(port);
  const host = (req.headers.get("host") ?? "").toLowerCase();
  if (!hosts.has(host)) return "host";
  const origin = req.headers.get("origin");
  if (origin === null) return null;
  const o = origin.toLowerCase();
  return o.startsWith("http://") && hosts.has(o.slice("http://".length)) ? null : "origin";
}
