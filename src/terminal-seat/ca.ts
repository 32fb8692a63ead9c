/**
 * Extra TLS trust for sandboxes behind an intercepting HTTPS proxy (corporate or CI egress).
 *
 * `HUMANISH_SANDBOX_CA_CERTS=<path to a PEM bundle on the host>`, else the host's own
 * `NODE_EXTRA_CA_CERTS` (a machine that needs an extra CA for Node on the host needs it in the
 * sandbox too; a user behind such a proxy should not have to learn a second variable). The bundle
 * (public certificates only, ≤ 1 MiB) is copied into the sandbox at {@link SANDBOX_CA_PATH} after
 * allocation, and commands that reach the network through Node or Codex get `NODE_EXTRA_CA_CERTS`
 * / `CODEX_CA_CERTIFICATE` pointing at it (names recorded, like every env). Both unset: nothing
 * is copied and no env is added.
 */
import { readFileSync, statSync } from "node:fs";
import { HumanishError } from "../errors.ts";
import { HOST_NODE_CA_ENV, SANDBOX_CA_ENV } from "../sandbox/tls-trust.ts";

export { HOST_NODE_CA_ENV, SANDBOX_CA_ENV, untrustedCertNext } from "../sandbox/tls-trust.ts";
/** Where the bundle lands inside the sandbox. */
export const SANDBOX_CA_PATH = "/opt/humanish-ca-bundle.pem";
/** Largest accepted bundle (bytes). */
export const SANDBOX_CA_MAX_BYTES = 1024 * 1024;

/** A validated CA bundle and the env that points sandbox tools at it. */
export interface SandboxCa {
  pem: string;
  /** Non-secret env for network-reaching commands. */
  env: Record<string, string>;
  /** The host variable that named the bundle. */
  source: typeof SANDBOX_CA_ENV | typeof HOST_NODE_CA_ENV;
}

/**
 * Reads and validates the bundle named by {@link SANDBOX_CA_ENV} (else {@link HOST_NODE_CA_ENV}),
 * or returns undefined when both are unset.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_CA_INVALID` naming the variable (missing, too large,
 *   no certificate, or a private key inside).
 */
export function loadSandboxCa(env: Record<string, string | undefined>): SandboxCa | undefined {
  const own = env[SANDBOX_CA_ENV]?.trim();
  const source = own ? SANDBOX_CA_ENV : HOST_NODE_CA_ENV;
  const path = own || env[HOST_NODE_CA_ENV]?.trim();
  if (!path) return undefined;
  const bad = (why: string) =>
    new HumanishError(
      "HUMANISH_TERMINAL_LAB_CA_INVALID",
      `${source} ${why}${source === HOST_NODE_CA_ENV ? ` (used for sandboxes because ${SANDBOX_CA_ENV} is unset)` : ""}.`,
      {
        next:
          source === SANDBOX_CA_ENV
            ? `Point ${SANDBOX_CA_ENV} at a PEM file of CA certificates (e.g. /etc/ssl/certs/ca-certificates.crt), or unset it.`
            : `Point ${HOST_NODE_CA_ENV} (or ${SANDBOX_CA_ENV}, which wins) at a PEM file of CA certificates, or unset it.`,
      },
    );
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error("not a file");
    size = st.size;
  } catch {
    throw bad("does not name a readable file");
  }
  if (size > SANDBOX_CA_MAX_BYTES) throw bad(`names a ${size}-byte file; at most ${SANDBOX_CA_MAX_BYTES} bytes are accepted`);
  const pem = readFileSync(path, "utf8");
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw bad("names a file with no PEM certificate");
  if (/PRIVATE KEY/.test(pem)) throw bad("names a file that contains a private key; only public CA certificates may be copied into a sandbox");
  return { pem, env: { NODE_EXTRA_CA_CERTS: SANDBOX_CA_PATH, CODEX_CA_CERTIFICATE: SANDBOX_CA_PATH }, source };
}
