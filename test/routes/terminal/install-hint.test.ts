/**
 * A failed `product.install` gets a next step that fits the lab: a lab without network is told
 * it may need `execution.network: bridge`; a lab that already has it is not (it is told to look
 * at the package and the registry). The no-network case runs for real.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installFailureHint } from "../../../src/routes/terminal/index.ts";
import { cli } from "../../cli/support.ts";
import { requireDocker } from "../../support/prereq.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-install-hint-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("install failure hint", () => {
  test("depends on the lab's network", () => {
    expect(installFailureHint("none")).toContain("set execution.network: bridge");
    expect(installFailureHint("bridge")).not.toContain("set execution.network: bridge");
    expect(installFailureHint("bridge")).toContain("check the package name and version");
  });

  test("a real failing install without network suggests bridge", async () => {
    await requireDocker();
    const lab = join(dir, "fails.yaml");
    writeFileSync(
      lab,
      [
        "schema: humanish.lab.v2",
        "id: install-fails",
        "title: install fails",
        "description: An install command that fails, with no network declared.",
        "subject:",
        "  source: terminal-product",
        "  product:",
        "    name: nothing",
        "    publicSurfaces: [https://example.org/]",
        "    install:",
        "      - echo cannot reach the registry >&2; exit 7",
        "actors:",
        "  - type: scripted-terminal",
        "    steps:",
        "      - run: 'true'",
        "execution:",
        "  target: docker",
        "scenario:",
        "  mode: live",
        "  caps: {maxUsd: 0, maxMinutes: 2}",
        "",
      ].join("\n"),
    );
    const r = await cli(["lab", "run", lab, "--json", "--cwd", dir]);
    const j = r.json<{ ok: boolean; error: { code: string; next: string } }>();
    expect(j.ok).toBe(false);
    expect(j.error.code).toBe("HUMANISH_TERMINAL_LAB_INSTALL_FAILED");
    expect(j.error.next).toBe(installFailureHint("none"));
  }, 120_000);
});
