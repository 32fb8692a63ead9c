/**
 * Test preload: every test process signs bundles with a key of its own, created on first use
 * in a fresh temp config directory (never the developer's `~/.config/humanish`). CLI processes
 * spawned with the test's env inherit the same directory, so they trust the same key.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

if (!process.env.HUMANISH_CONFIG_DIR && !process.env.HUMANISH_SIGNING_KEY) {
  const dir = mkdtempSync(join(tmpdir(), "humanish-test-config-"));
  process.env.HUMANISH_CONFIG_DIR = dir;
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
}
