/**
 * The embedded TodoMVC app (`subject.serve.static.root: "embedded:todomvc-vanillajs"`): its files
 * are byte-identical to the npm package's, cover everything index.html and base.css reference,
 * and the in-memory static server serves exactly them — nothing else, whatever the path says.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMBEDDED_APP_NAMES } from "../../../src/lab/index.ts";
import { EMBEDDED_APP_SOURCES, loadEmbeddedApp } from "../../../src/routes/browser/embedded-app.ts";
import { serveEmbedded, startApp } from "../../../src/routes/browser/serve.ts";
import { freePort, TODOMVC_ROOT } from "../../runtime/guest-support.ts";
import { rawGet } from "./support.ts";

const empty = mkdtempSync(join(tmpdir(), "humanish-embedded-app-"));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

describe("embedded app todomvc-vanillajs", () => {
  test("every listed app has sources; the files are the npm package's, byte for byte, with a listing hash", async () => {
    expect(Object.keys(EMBEDDED_APP_SOURCES).sort()).toEqual([...EMBEDDED_APP_NAMES].sort());
    const pkg = JSON.parse(readFileSync(join(TODOMVC_ROOT, "../../package.json"), "utf8"));
    const app = await loadEmbeddedApp("todomvc-vanillajs");
    expect(app.package).toBe(`todomvc@${pkg.version}`);
    expect(app.package).toBe("todomvc@0.1.1");
    const expected = [
      "bower_components/todomvc-common/base.css",
      "bower_components/todomvc-common/base.js",
      "bower_components/todomvc-common/bg.png",
      "index.html",
      ...readdirSync(join(TODOMVC_ROOT, "js"))
        .filter((f) => f.endsWith(".js"))
        .sort()
        .map((f) => `js/${f}`),
    ];
    expect(app.files.map((f) => f.path)).toEqual(expected);
    for (const f of app.files) {
      const disk = readFileSync(join(TODOMVC_ROOT, f.path));
      expect(Buffer.from(f.bytes).equals(disk)).toBe(true);
      expect(f.sha256).toBe(sha(disk));
    }
    expect(app.bytes).toBe(app.files.reduce((n, f) => n + f.bytes.byteLength, 0));
    expect(app.sha256).toBe(sha(expected.map((p) => `${sha(readFileSync(join(TODOMVC_ROOT, p)))}  ${p}\n`).join("")));
  });

  test("everything index.html and base.css load is embedded", async () => {
    const app = await loadEmbeddedApp("todomvc-vanillajs");
    const paths = new Set(app.files.map((f) => f.path));
    const html = readFileSync(join(TODOMVC_ROOT, "index.html"), "utf8");
    const refs = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBe(9);
    for (const r of refs) expect(paths.has(r)).toBe(true);
    const css = readFileSync(join(TODOMVC_ROOT, "bower_components/todomvc-common/base.css"), "utf8");
    const urls = [...css.matchAll(/url\(['"]?([^'")]+)['"]?\)/g)].map((m) => `bower_components/todomvc-common/${m[1]}`);
    expect(urls).toEqual(["bower_components/todomvc-common/bg.png"]);
    for (const u of urls) expect(paths.has(u)).toBe(true);
  });

  test("an unknown name is refused by the loader too", async () => {
    await expect(loadEmbeddedApp("todomvc-react")).rejects.toMatchObject({ code: "HUMANISH_BROWSER_SERVE_FAILED" });
  });

  test("the server serves exactly the embedded bytes and refuses everything else", async () => {
    const app = await loadEmbeddedApp("todomvc-vanillajs");
    const port = freePort();
    const server = serveEmbedded(app, port);
    try {
      const base = `http://127.0.0.1:${port}`;
      for (const f of app.files) {
        const res = await fetch(`${base}/${f.path}`);
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(TODOMVC_ROOT, f.path)))).toBe(true);
      }
      const root = await fetch(`${base}/`);
      expect(root.headers.get("content-type")).toStartWith("text/html");
      expect(await root.text()).toBe(readFileSync(join(TODOMVC_ROOT, "index.html"), "utf8"));
      expect((await fetch(`${base}/bower_components/todomvc-common/base.css`)).headers.get("content-type")).toStartWith("text/css");
      expect((await fetch(`${base}/js/app.js`)).headers.get("content-type")).toStartWith("text/javascript");
      expect((await fetch(`${base}/bower_components/todomvc-common/bg.png`)).headers.get("content-type")).toBe("image/png");
      expect((await fetch(`${base}/js/%61pp.js`)).status).toBe(200);
      // Files of the package outside the app, directories, traversal in every spelling: 404.
      for (const target of [
        "/readme.md",
        "/bower.json",
        "/test/ControllerSpec.js",
        "/learn.json",
        "/js",
        "/js/",
        "/../package.json",
        "/../../package.json",
        "/%2e%2e/%2e%2e/package.json",
        "/js/..%2f..%2f..%2fpackage.json",
        "//etc/passwd",
        "/%2Fetc%2Fpasswd",
        "/index.html%00",
        "/%E0%A4%A",
        "/etc/passwd",
      ]) {
        const status = await rawGet(port, target);
        expect([target, status]).toEqual([target, 404]);
      }
      // Dot segments are resolved by the URL parser and clamp at the app's root: still only app files.
      expect(await rawGet(port, "/js/%2e%2e/%2e%2e/index.html")).toBe(200);
      expect(await rawGet(port, "/js/../../../js/app.js")).toBe(200);
      expect((await fetch(`${base}/`, { method: "POST" })).status).toBe(405);
      expect(server.embedded).toMatchObject({ name: "todomvc-vanillajs", package: "todomvc@0.1.1", sha256: app.sha256, bytes: app.bytes });
      expect(server.embedded?.files).toHaveLength(app.files.length);
    } finally {
      await server.close();
    }
  });

  test("startApp serves embedded:todomvc-vanillajs from an empty project directory", async () => {
    expect(readdirSync(empty)).toEqual([]);
    const port = freePort();
    const app = await startApp({ appUrl: `http://127.0.0.1:${port}/`, serve: { static: { root: "embedded:todomvc-vanillajs" } }, cwd: empty });
    try {
      expect(app.kind).toBe("static");
      expect(app.embedded?.name).toBe("todomvc-vanillajs");
      // Served on a host port of its own; the lab's port stays free (the guest reaches it by its forwarder).
      expect(app.port).not.toBe(port);
      expect(await (await fetch(`http://127.0.0.1:${app.port}/`)).text()).toContain("todoapp");
    } finally {
      await app.close();
    }
    // A project-relative root that does not exist there still fails as before.
    await expect(
      startApp({ appUrl: `http://127.0.0.1:${freePort()}/`, serve: { static: { root: "node_modules/todomvc/examples/vanillajs" } }, cwd: empty }),
    ).rejects.toMatchObject({ code: "HUMANISH_BROWSER_SERVE_FAILED" });
  });

  test("two studies of the same lab serve it side by side: each on its own host port, the lab's port untouched", async () => {
    const appUrl = `http://127.0.0.1:${freePort()}/`;
    const lab = Bun.serve({ hostname: "127.0.0.1", port: Number(new URL(appUrl).port), fetch: () => new Response("whatever else listens there") });
    const first = await startApp({ appUrl, serve: { static: { root: "embedded:todomvc-vanillajs" } }, cwd: empty });
    try {
      const second = await startApp({ appUrl, serve: { static: { root: "embedded:todomvc-vanillajs" } }, cwd: empty });
      try {
        expect(second.port).not.toBe(first.port);
        for (const app of [first, second]) expect(await (await fetch(`http://127.0.0.1:${app.port}/`)).text()).toContain("todoapp");
        expect(await (await fetch(appUrl)).text()).toBe("whatever else listens there");
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      lab.stop(true);
    }
  });
});
