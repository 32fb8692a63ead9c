/** The opt-in sandbox CA bundle (`HUMANISH_SANDBOX_CA_CERTS`): public certificates only, bounded. */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isHumanishError } from "../../src/errors.ts";
import { loadSandboxCa, SANDBOX_CA_MAX_BYTES, SANDBOX_CA_PATH } from "../../src/terminal/ca.ts";
import { tmpProject } from "../routes/terminal/support.ts";

const project = tmpProject();
afterAll(() => project.cleanup());
const CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FURVNU\n-----END CERTIFICATE-----\n";

function file(name: string, text: string): string {
  const p = join(project.dir, name);
  writeFileSync(p, text);
  return p;
}

function code(env: Record<string, string>): string | undefined {
  try {
    loadSandboxCa(env);
    return undefined;
  } catch (e) {
    return isHumanishError(e) ? e.code : String(e);
  }
}

describe("loadSandboxCa", () => {
  test("unset or blank → nothing is copied and no env added", () => {
    expect(loadSandboxCa({})).toBeUndefined();
    expect(loadSandboxCa({ HUMANISH_SANDBOX_CA_CERTS: "  " })).toBeUndefined();
  });

  test("a PEM bundle → copied to a fixed path, Node and Codex pointed at it", () => {
    const ca = loadSandboxCa({ HUMANISH_SANDBOX_CA_CERTS: file("ok.pem", CERT + CERT) });
    expect(ca?.pem).toBe(CERT + CERT);
    expect(ca?.env).toEqual({ NODE_EXTRA_CA_CERTS: SANDBOX_CA_PATH, CODEX_CA_CERTIFICATE: SANDBOX_CA_PATH });
  });

  test("refused: missing file, directory, no certificate, a private key, too large", () => {
    expect(code({ HUMANISH_SANDBOX_CA_CERTS: join(project.dir, "missing.pem") })).toBe("HUMANISH_TERMINAL_LAB_CA_INVALID");
    expect(code({ HUMANISH_SANDBOX_CA_CERTS: project.dir })).toBe("HUMANISH_TERMINAL_LAB_CA_INVALID");
    expect(code({ HUMANISH_SANDBOX_CA_CERTS: file("empty.pem", "hello") })).toBe("HUMANISH_TERMINAL_LAB_CA_INVALID");
    expect(code({ HUMANISH_SANDBOX_CA_CERTS: file("key.pem", `${CERT}-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n`) })).toBe(
      "HUMANISH_TERMINAL_LAB_CA_INVALID",
    );
    expect(code({ HUMANISH_SANDBOX_CA_CERTS: file("big.pem", CERT + "x".repeat(SANDBOX_CA_MAX_BYTES)) })).toBe("HUMANISH_TERMINAL_LAB_CA_INVALID");
  });
});
