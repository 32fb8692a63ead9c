/** The opt-in sandbox CA bundle (`HUMANISH_SANDBOX_CA_CERTS`): public certificates only, bounded. */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isHumanishError } from "../../src/errors.ts";
import { loadSandboxCa, SANDBOX_CA_MAX_BYTES, SANDBOX_CA_PATH, untrustedCertNext } from "../../src/terminal-seat/ca.ts";
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

  test("NODE_EXTRA_CA_CERTS on the host is used when HUMANISH_SANDBOX_CA_CERTS is unset; the humanish variable wins", () => {
    const host = file("host.pem", CERT);
    const own = file("own.pem", CERT + CERT);
    expect(loadSandboxCa({ NODE_EXTRA_CA_CERTS: host })).toMatchObject({ pem: CERT, source: "NODE_EXTRA_CA_CERTS" });
    expect(loadSandboxCa({ NODE_EXTRA_CA_CERTS: host, HUMANISH_SANDBOX_CA_CERTS: own })).toMatchObject({
      pem: CERT + CERT,
      source: "HUMANISH_SANDBOX_CA_CERTS",
    });
    // A bad host bundle is refused naming the variable it came from.
    try {
      loadSandboxCa({ NODE_EXTRA_CA_CERTS: join(project.dir, "gone.pem") });
      throw new Error("accepted");
    } catch (e) {
      expect(isHumanishError(e, "HUMANISH_TERMINAL_LAB_CA_INVALID")).toBe(true);
      expect((e as Error).message).toContain(
        "NODE_EXTRA_CA_CERTS does not name a readable file (used for sandboxes because HUMANISH_SANDBOX_CA_CERTS is unset)",
      );
    }
  });
});

describe("untrustedCertNext", () => {
  // npm 10's own words for the two failures an intercepting proxy causes.
  const selfSigned =
    "npm error code SELF_SIGNED_CERT_IN_CHAIN\nnpm error errno SELF_SIGNED_CERT_IN_CHAIN\nnpm error request to https://registry.npmjs.org/@openai%2fcodex failed, reason: self-signed certificate in certificate chain";
  const issuer =
    "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY\nnpm error request to https://registry.npmjs.org/jq failed, reason: unable to get local issuer certificate";

  test("names HUMANISH_SANDBOX_CA_CERTS (and NODE_EXTRA_CA_CERTS) for either failure; says the bundle lacks the issuer when one was copied", () => {
    for (const out of [selfSigned, issuer]) {
      expect(untrustedCertNext(out, false)).toContain("Set HUMANISH_SANDBOX_CA_CERTS on the host");
      expect(untrustedCertNext(out, false)).toContain("NODE_EXTRA_CA_CERTS is used when it is unset");
      expect(untrustedCertNext(out, true)).toContain("that bundle lacks the issuer");
    }
    expect(untrustedCertNext("npm error 404 Not Found - GET https://registry.npmjs.org/nope", false)).toBeNull();
  });
});
