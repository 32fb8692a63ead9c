import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { listRuns, loadSigningKey } from "../../src/bundle/index.ts";
import { sealRunDir } from "../../src/bundle/signing/seal.ts";
import { isHumanishError } from "../../src/errors.ts";
import { type LibraryServer, startLibraryServer, writeReport } from "../../src/report/index.ts";
import { tempProject, writeBrowserRun, writeDryRun, writeTerminalRun } from "./fixtures.ts";

const SENTINEL = "TOP-SECRET-SENTINEL-5d1c";
const project = tempProject("humanish-serve-");
const elsewhere = tempProject("humanish-serve-outside-");
let server: LibraryServer;

/** Sends one raw HTTP/1.1 request (no client-side URL normalisation) and returns status and body. */
function raw(port: number, target: string, opts: { method?: string; host?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const c = connect(port, "127.0.0.1", () => {
      c.write(`${opts.method ?? "GET"} ${target} HTTP/1.1\r\nHost: ${opts.host ?? `127.0.0.1:${port}`}\r\nConnection: close\r\n\r\n`);
    });
    let data = "";
    c.setEncoding("latin1");
    c.on("data", (d) => (data += d));
    c.on("error", reject);
    c.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
  });
}

beforeAll(async () => {
  writeFileSync(join(project.cwd, "secret.txt"), SENTINEL);
  writeFileSync(join(elsewhere.cwd, "secret.txt"), SENTINEL);
  const terminal = await writeTerminalRun(project.cwd, "terminal-run-1");
  await writeReport(terminal);
  await writeDryRun(project.cwd, "dry-run-1"); // no report on disk: rendered in memory
  await writeBrowserRun(project.cwd, "browser-run-1");

  // A run whose report file is a symlink to a file outside the project.
  const linked = await writeTerminalRun(project.cwd, "symlinked-report");
  mkdirSync(join(linked, "report"), { recursive: true });
  symlinkSync(join(elsewhere.cwd, "secret.txt"), join(linked, "report", "index.html"));
  // A run whose report file is a hard link to a file outside the run.
  const hard = await writeTerminalRun(project.cwd, "hardlinked-report");
  mkdirSync(join(hard, "report"), { recursive: true });
  linkSync(join(project.cwd, "secret.txt"), join(hard, "report", "index.html"));
  // A run directory that is itself a symlink to a real-looking run elsewhere.
  const outsideRun = await writeTerminalRun(elsewhere.cwd, "outside-run");
  await writeReport(outsideRun);
  writeFileSync(join(outsideRun, "report", "secret.txt"), SENTINEL);
  symlinkSync(outsideRun, join(project.cwd, ".humanish", "runs", "linked-run"));

  // A run whose stored report was replaced by a forged "ALL GOOD" page after the seal.
  const forged = await writeTerminalRun(project.cwd, "forged-report");
  await writeReport(forged);
  writeFileSync(join(forged, "report", "index.html"), "<!doctype html><html><body><main><h1>ALL GOOD</h1></main></body></html>");
  // An intact run sealed by a key this machine does not trust: local_only.
  const foreign = await writeTerminalRun(project.cwd, "foreign-signer");
  await writeReport(foreign);
  const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  sealRunDir(foreign, "foreign-signer", loadSigningKey({ HUMANISH_SIGNING_KEY: pem }));

  server = await startLibraryServer({ cwd: project.cwd, host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  await server?.stop();
  project.cleanup();
  elsewhere.cleanup();
});

describe("library server", () => {
  test("binds 127.0.0.1 and serves the index of every run, newest first, each linking its report", async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
    const res = await fetch(server.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    const listed = (await listRuns(project.cwd)).map((r) => r.runId);
    expect(listed).toContain("dry-run-1");
    expect(listed).not.toContain("linked-run");
    const order = listed.map((id) => html.indexOf(`href="/runs/${id}/"`));
    for (const i of order) expect(i).toBeGreaterThan(-1);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).not.toContain("linked-run");
    // The terminal run (02:00) is listed before the dry run (01:00).
    expect(html.indexOf("terminal-run-1")).toBeLessThan(html.indexOf("dry-run-1"));
    expect(html).toContain("unmeasured");
  });

  test("serves a run's report: the written file, or one rendered in memory without writing", async () => {
    const a = await fetch(`${server.url}runs/terminal-run-1/`);
    expect(a.status).toBe(200);
    const body = await a.text();
    expect(body).toContain("1/1 reached the goal; tasks: extract-name 1/1 · count-tags 0/1");
    const again = await fetch(`${server.url}runs/terminal-run-1/report/index.html`);
    expect(await again.text()).toBe(body);

    const dry = await fetch(`${server.url}runs/dry-run-1`);
    expect(dry.status).toBe(200);
    expect(await dry.text()).toContain("dry run (contract only): 0/1 participants ran");
    expect(existsSync(join(project.cwd, ".humanish", "runs", "dry-run-1", "report"))).toBe(false);

    const browser = await fetch(`${server.url}runs/browser-run-1/`);
    expect(await browser.text()).toContain('<img src="data:image/png;base64,');
  });

  test("path traversal in every spelling is refused and never reads outside the runs", async () => {
    const targets = [
      "/../secret.txt",
      "/runs/../../secret.txt",
      "/runs/terminal-run-1/../../../secret.txt",
      "/runs/%2e%2e/%2e%2e/secret.txt",
      "/runs/%2E%2E%2F%2E%2E%2Fsecret.txt",
      "/runs/..%2f..%2fsecret.txt",
      "/runs/%252e%252e/%252e%252e/secret.txt",
      "/runs/%252e%252e%252f%252e%252e%252fsecret.txt",
      "/runs\\..\\..\\secret.txt",
      "/runs/terminal-run-1/..%5c..%5c..%5csecret.txt",
      "/runs/terminal-run-1/run.json",
      "/runs/terminal-run-1/report/../run.json",
      "/runs/terminal-run-1/report/../../../../../../etc/passwd",
      "/runs/./terminal-run-1/./run.json",
      "/runs/latest.json",
      "/secret.txt",
      "/etc/passwd",
      "/runs/%00/",
      "//runs/terminal-run-1/",
    ];
    for (const t of targets) {
      const r = await raw(server.port, t);
      expect({ t, refused: [400, 403, 404].includes(r.status) }).toEqual({ t, refused: true });
      expect(r.body).not.toContain(SENTINEL);
      expect(r.body).not.toContain("root:x:0:0");
      expect(r.body).not.toContain("humanish.run-bundle.v1");
    }
  });

  test("symlinked and hard-linked report files and symlinked run directories are refused", async () => {
    for (const t of ["/runs/symlinked-report/", "/runs/hardlinked-report/", "/runs/linked-run/", "/runs/linked-run/report/index.html"]) {
      const r = await raw(server.port, t);
      expect({ t, status: r.status }).toEqual({ t, status: 403 });
      expect(r.body).not.toContain(SENTINEL);
      expect(r.body).not.toContain("<!doctype html>");
    }
  });

  test("read-only, loopback-origin only", async () => {
    expect((await raw(server.port, "/", { method: "POST" })).status).toBe(405);
    expect((await raw(server.port, "/runs/terminal-run-1/", { method: "DELETE" })).status).toBe(405);
    expect((await raw(server.port, "/", { method: "PUT" })).status).toBe(405);
    // A rebinding attacker's Host header is refused.
    const rebound = await raw(server.port, "/runs/terminal-run-1/", { host: `evil.example:${server.port}` });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain("reached the goal");
    const head = await fetch(server.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  test("is not reachable on any non-loopback address of this machine", async () => {
    const addrs = Object.values(networkInterfaces())
      .flat()
      .filter((a): a is NonNullable<typeof a> => !!a && a.family === "IPv4" && !a.internal)
      .map((a) => a.address);
    for (const addr of addrs) {
      const outcome = await new Promise<string>((resolve) => {
        const c = connect({ port: server.port, host: addr });
        c.on("connect", () => {
          c.destroy();
          resolve("connected");
        });
        c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
      });
      expect({ addr, outcome }).toEqual({ addr, outcome: "ECONNREFUSED" });
    }
  });

  test("any bind address other than 127.0.0.1 is refused before listening", async () => {
    for (const host of ["0.0.0.0", "::", "::1", "192.168.1.10", "127.0.0.2", "example.com", ""]) {
      let err: unknown;
      try {
        const s = await startLibraryServer({ cwd: project.cwd, host, port: 0 });
        await s.stop();
      } catch (e) {
        err = e;
      }
      expect({ host, code: isHumanishError(err) ? err.code : String(err) }).toEqual({ host, code: "HUMANISH_SERVE_NON_LOOPBACK" });
    }
    let portErr: unknown;
    try {
      await startLibraryServer({ cwd: project.cwd, port: 70000 });
    } catch (e) {
      portErr = e;
    }
    expect(isHumanishError(portErr, "HUMANISH_INVALID_PORT")).toBe(true);
  });

  test("a taken port is HUMANISH_PORT_IN_USE", async () => {
    let err: unknown;
    try {
      const s = await startLibraryServer({ cwd: project.cwd, port: server.port });
      await s.stop();
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_PORT_IN_USE")).toBe(true);
  });

  test("a run without a sealed bundle is listed and its page says why there is no report", async () => {
    mkdirSync(join(project.cwd, ".humanish", "runs", "unsealed-run"));
    const index = await (await fetch(server.url)).text();
    expect(index).toContain("unsealed-run");
    const r = await fetch(`${server.url}runs/unsealed-run/`);
    expect(r.status).toBe(404);
    expect(await r.text()).toContain("no sealed run.json yet");
  });

  test("an empty project serves an empty index", async () => {
    const empty = tempProject("humanish-serve-empty-");
    const s = await startLibraryServer({ cwd: empty.cwd });
    try {
      const html = await (await fetch(s.url)).text();
      expect(html).toContain("No runs yet");
    } finally {
      await s.stop();
      empty.cleanup();
    }
  });

  test("a bundle that does not verify: its stored report is never served; a page says why, and the index says NOT VERIFIED", async () => {
    expect(readFileSync(join(project.cwd, ".humanish", "runs", "forged-report", "report", "index.html"), "utf8")).toContain("ALL GOOD");
    for (const target of ["/runs/forged-report/", "/runs/forged-report", "/runs/forged-report/report/index.html"]) {
      const r = await fetch(new URL(target, server.url));
      expect(r.status).toBe(409);
      const body = await r.text();
      expect(body).not.toContain("ALL GOOD");
      expect(body).toContain("Report not served");
      expect(body).toContain("humanish verify --run forged-report");
      // The verify failure itself: the report's digest no longer matches its listing.
      expect(body).toMatch(/report\/index\.html/);
    }
    const index = await (await fetch(server.url)).text();
    const row = index.slice(index.indexOf('href="/runs/forged-report/"'));
    expect(row.slice(0, row.indexOf("</tr>"))).toContain("NOT VERIFIED");
  });

  test("a local_only bundle (signer not trusted) is served with the mark on the page and in the index; a trusted one is not marked", async () => {
    const r = await fetch(`${server.url}runs/foreign-signer/`);
    expect(r.status).toBe(200);
    const body = await r.text();
    const banner = body.indexOf('id="humanish-verify-state"');
    expect(banner).toBeGreaterThan(-1);
    // First thing in the page body, before the report's own header.
    expect(banner).toBeLessThan(body.indexOf("<header"));
    expect(body).toContain("Local only — not verified for sharing");
    expect(body).toContain("UNTRUSTED_SIGNER");
    const index = await (await fetch(server.url)).text();
    const rowOf = (id: string) => {
      const row = index.slice(index.indexOf(`href="/runs/${id}/"`));
      return row.slice(0, row.indexOf("</tr>"));
    };
    expect(rowOf("foreign-signer")).toContain("local only: UNTRUSTED_SIGNER");
    expect(rowOf("terminal-run-1")).toContain("verified · share ready");
    const own = await (await fetch(`${server.url}runs/terminal-run-1/`)).text();
    expect(own).not.toContain('id="humanish-verify-state"');
  });
});
