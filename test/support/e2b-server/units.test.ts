/** Pure parts of the local E2B-compatible server: Connect-JSON framing, faults, entry parsing, egress rules, SNI. */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { decodeRequestEnvelope, endStream, envelope, selectorOf, signalNumber } from "./connect-json.ts";
import { allowsHost, egressPolicy, hostMatches, transformHeaders } from "./egress-policy.ts";
import { parseEntries, resolvePath } from "./envd-filesystem.ts";
import { controlPlaneFault, createFaults, routeMatches } from "./faults.ts";
import { hostsEdit, readNetworkUpdate, rewiring } from "./network-update.ts";
import { sniOf } from "./sni.ts";

describe("connect json", () => {
  test("envelopes round-trip and end-of-stream carries the error", () => {
    const e = envelope(0, { process: { pid: 7 } });
    expect(e[0]).toBe(0);
    expect(decodeRequestEnvelope(e)).toEqual({ process: { pid: 7 } });
    const end = endStream({ code: "not_found", message: "x" });
    expect(end[0]).toBe(2);
    expect(decodeRequestEnvelope(end)).toEqual({ error: { code: "not_found", message: "x" } });
    expect(() => decodeRequestEnvelope(new Uint8Array([0, 0, 0, 0, 9, 1]))).toThrow("declares 9 bytes");
    expect(selectorOf({ process: { tag: "t" } })).toEqual({ tag: "t" });
    expect(selectorOf({})).toBeUndefined();
    expect([signalNumber("SIGNAL_SIGKILL"), signalNumber(15), signalNumber("SIGNAL_SIGHUP")]).toEqual([9, 15, undefined]);
  });
});

describe("faults", () => {
  test("counted faults match their route, are used up, and 401 wins over 429", () => {
    expect(routeMatches("GET /sandboxes/*", "GET /sandboxes/abc")).toBe(true);
    expect(routeMatches("GET /sandboxes/*", "GET /sandboxes/abc/metrics")).toBe(false);
    expect(routeMatches(undefined, "DELETE /x")).toBe(true);
    const f = createFaults();
    f.rateLimited = { times: 2, retryAfterSeconds: 3, route: "POST /v2/sandboxes" };
    f.unauthorized = { times: 1 };
    expect(controlPlaneFault(f, "POST /v2/sandboxes")).toMatchObject({ status: 401 });
    expect(controlPlaneFault(f, "GET /sandboxes/a")).toBeUndefined();
    expect(controlPlaneFault(f, "POST /v2/sandboxes")).toEqual({ status: 429, message: expect.any(String), retryAfterSeconds: 3 });
    expect(controlPlaneFault(f, "POST /v2/sandboxes")).toMatchObject({ status: 429 });
    expect(controlPlaneFault(f, "POST /v2/sandboxes")).toBeUndefined();
    f.kill = "hang";
    f.reset();
    expect(f).toMatchObject({ kill: "normal", unauthorized: undefined, rateLimited: undefined });
  });
});

describe("filesystem", () => {
  test("find records parse into entries; relative paths resolve in the user's home", () => {
    const out =
      "f\x005\x00644\x00-rw-r--r--\x00user\x00user\x001700000000.5\x00\x00/home/user/a b.txt\x00l\x000\x00777\x00lrwxrwxrwx\x00root\x00root\x001700000000\x00/etc\x00/tmp/l\x00";
    expect(parseEntries(out)).toEqual([
      {
        name: "a b.txt",
        type: "FILE_TYPE_FILE",
        path: "/home/user/a b.txt",
        size: "5",
        mode: 0o644,
        permissions: "-rw-r--r--",
        owner: "user",
        group: "user",
        modifiedTime: new Date(1_700_000_000_500).toISOString(),
      },
      {
        name: "l",
        type: "FILE_TYPE_SYMLINK",
        path: "/tmp/l",
        size: "0",
        mode: 0o777,
        permissions: "lrwxrwxrwx",
        owner: "root",
        group: "root",
        modifiedTime: new Date(1_700_000_000_000).toISOString(),
        symlinkTarget: "/etc",
      },
    ]);
    expect(resolvePath("x/../y.txt", undefined)).toBe("/home/user/y.txt");
    expect(resolvePath("y", "root")).toBe("/root/y");
    expect(resolvePath("/tmp//z", "user")).toBe("/tmp/z");
  });
});

describe("egress rules", () => {
  test("deny-all, allowOut host names, exact rules before the longest wildcard", () => {
    const p = egressPolicy({
      network: {
        allowOut: ["API.openai.com", "*.example.com", "8.8.8.8/32"],
        denyOut: ["0.0.0.0/0"],
        rules: {
          "*.example.com": [{ transform: { headers: { a: "wide" } } }],
          "*.b.example.com": [{ transform: { headers: { a: "narrow" } } }],
          "x.b.example.com": [{ transform: { headers: { a: "exact" } } }, { transform: { headers: { b: "2" } } }],
        },
      },
    });
    expect(p).toMatchObject({ denyAll: true, allowHosts: ["api.openai.com", "*.example.com"] });
    expect([allowsHost(p, "api.openai.com"), allowsHost(p, "y.example.com"), allowsHost(p, "example.com"), allowsHost(p, "evil.com")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(transformHeaders(p, "x.b.example.com")).toEqual({ a: "exact", b: "2" });
    expect(transformHeaders(p, "y.b.example.com")).toEqual({ a: "narrow" });
    expect(transformHeaders(p, "q.example.com")).toEqual({ a: "wide" });
    expect(transformHeaders(p, "api.openai.com")).toEqual({});
    expect(hostMatches("*.example.com", "a.b.example.com")).toBe(true);
    expect(egressPolicy({ allow_internet_access: false }).denyAll).toBe(true);
    expect(allowsHost(egressPolicy({}), "anything.test")).toBe(true);
  });

  test("the server name of a real ClientHello", async () => {
    const hello = await new Promise<Uint8Array>((resolve) => {
      const server = createServer((sock) => {
        sock.once("data", (d: Buffer) => {
          resolve(new Uint8Array(d));
          sock.destroy();
          server.close();
        });
      }).listen(0, "127.0.0.1", () => {
        const port = (server.address() as { port: number }).port;
        tlsConnect({ host: "127.0.0.1", port, servername: "API.OpenAI.com" }).on("error", () => undefined);
      });
    });
    expect(sniOf(hello)).toEqual({ host: "api.openai.com" });
    expect(sniOf(hello.subarray(0, 20))).toBe("incomplete");
    expect(sniOf(new TextEncoder().encode("GET / HTTP/1.1\r\n"))).toBe("invalid");
  });
});

describe("network update", () => {
  test("the update body becomes the new config: given fields only, rule keys lowercased, bad fields named without values", () => {
    expect(readNetworkUpdate({ allow_internet_access: false, denyOut: ["0.0.0.0/0"] })).toEqual({
      allow_internet_access: false,
      network: { denyOut: ["0.0.0.0/0"] },
    });
    // Omitted fields are cleared: an empty update is an unrestricted sandbox.
    expect(readNetworkUpdate({})).toEqual({});
    expect(readNetworkUpdate(undefined)).toEqual({});
    const rule = { transform: { headers: { Authorization: "Bearer sk-unit-value" } } };
    expect(readNetworkUpdate({ allowOut: ["api.openai.com"], rules: { "API.OpenAI.com": [rule, {}] } })).toEqual({
      network: { allowOut: ["api.openai.com"], rules: { "api.openai.com": [rule, {}] } },
    });
    const bad = [
      readNetworkUpdate([]),
      readNetworkUpdate({ allow_internet_access: "no" }),
      readNetworkUpdate({ denyOut: "0.0.0.0/0" }),
      readNetworkUpdate({ rules: { "*": [] } }),
      readNetworkUpdate({ rules: { "a.test": [{ transform: { headers: { Authorization: 7 } } }] } }),
      readNetworkUpdate({ egressProxy: { address: "proxy.test:1080" } }),
      readNetworkUpdate({ allowPublicTraffic: true }),
    ];
    expect(bad).toEqual([
      "the body must be a JSON object",
      "allow_internet_access must be a boolean",
      "denyOut must be a list of strings",
      "rules: '*' is not a host name or a '*.suffix' wildcard",
      "rules['a.test'][0].transform.headers must map header names to strings",
      "egressProxy is not emulated by this server",
      "unknown field(s): allowPublicTraffic",
    ]);
    expect(readNetworkUpdate({ rules: { "a.test": [{ transform: { headers: { x: "sk-never-echoed" } } }], "*": [] } })).not.toContain("sk-never-echoed");
  });

  test("networks to leave and join", () => {
    expect(rewiring(["bridge"], [])).toEqual({ disconnect: ["bridge"], connect: [] });
    expect(rewiring(["none"], ["bridge"])).toEqual({ disconnect: ["none"], connect: ["bridge"] });
    expect(rewiring(["bridge"], ["egress"])).toEqual({ disconnect: ["bridge"], connect: ["egress"] });
    expect(rewiring(["egress"], ["egress"])).toEqual({ disconnect: [], connect: [] });
  });

  test("the hosts edit drops the old proxy entries, keeps the rest, appends the new ones", () => {
    expect(hostsEdit(["a.test:10.0.0.1"], ["a.test:10.0.0.1"])).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), "humanish-hosts-edit-"));
    try {
      const file = join(dir, "hosts");
      writeFileSync(file, "127.0.0.1\tlocalhost\n10.0.0.1\tapi.openai.com\n172.17.0.2\tabc123\n");
      const run = (cmd: string[] | undefined) => {
        const r = spawnSync(cmd![0]!, cmd!.slice(1), { encoding: "utf8" });
        expect(r.status).toBe(0);
        return readFileSync(file, "utf8");
      };
      expect(run(hostsEdit(["api.openai.com:10.0.0.1"], ["api.openai.com:10.9.0.1", "b.test:10.9.0.1"], file))).toBe(
        "127.0.0.1\tlocalhost\n172.17.0.2\tabc123\n10.9.0.1\tapi.openai.com\n10.9.0.1\tb.test\n",
      );
      expect(run(hostsEdit(["api.openai.com:10.9.0.1", "b.test:10.9.0.1"], [], file))).toBe("127.0.0.1\tlocalhost\n172.17.0.2\tabc123\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
