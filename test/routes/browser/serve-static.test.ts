/** The project-relative static server of `subject.serve.static.root`: contained, read-only. */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveStatic } from "../../../src/routes/browser/serve.ts";
import { freePort } from "../../runtime/guest-support.ts";
import { rawGet } from "./support.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-static-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("serves files inside the root only; GET/HEAD only; a taken port is a clear error", async () => {
  const root = join(dir, "app");
  mkdirSync(join(root, "js"), { recursive: true });
  writeFileSync(join(root, "index.html"), "<h1>app</h1>");
  writeFileSync(join(root, "js", "a.js"), "1");
  writeFileSync(join(dir, "secret.txt"), "outside");
  symlinkSync(join(dir, "secret.txt"), join(root, "link.txt"));
  const port = await freePort();
  const app = serveStatic(root, port);
  try {
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/`)).text()).toBe("<h1>app</h1>");
    expect(await (await fetch(`${base}/js/a.js`)).text()).toBe("1");
    // Sent byte-exact (no client-side normalisation): traversal, encoded traversal, a symlink out.
    for (const bad of ["/../secret.txt", "/%2e%2e/secret.txt", "/js/%2e%2e/%2e%2e/secret.txt", "/js/..%2f..%2fsecret.txt", "/link.txt", "/nope"]) {
      expect(await rawGet(port, bad)).toBe(404);
    }
    expect((await fetch(`${base}/`, { method: "POST" })).status).toBe(405);
    let code = "";
    try {
      serveStatic(root, port);
    } catch (e) {
      code = (e as { code: string }).code;
    }
    expect(code).toBe("HUMANISH_BROWSER_SERVE_FAILED");
  } finally {
    await app.close();
  }
});
