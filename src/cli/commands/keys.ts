/** `humanish keys` — the bundle-signing public key of this user. */
import { join } from "node:path";
import { configDir, loadSigningKey, SIGNING_KEY_FILE } from "../../bundle/index.ts";
import type { CommandOutcome } from "../output.ts";
import type { CommandContext } from "./context.ts";

/**
 * `keys [--json]`: print the public key (base64 of the 32 raw Ed25519 bytes) and its fingerprint,
 * creating the key pair on first use. The private key is never printed.
 * @throws HumanishError HUMANISH_SIGNING_KEY_INVALID / _INSECURE / _UNAVAILABLE from the key loader
 */
export async function keysCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const key = loadSigningKey(ctx.env)!;
  const keyFile = key.source === "file" ? join(configDir(ctx.env), SIGNING_KEY_FILE) : null;
  const human = [
    `public key   ${key.publicKey}`,
    `fingerprint  ${key.fingerprint}`,
    key.source === "env" ? "source       HUMANISH_SIGNING_KEY" : `source       ${keyFile}${key.created ? " (created just now)" : ""}`,
    `others trust your bundles with: humanish verify --trust ${key.fingerprint}`,
  ].join("\n");
  return {
    result: {
      schema: ctx.spec.schema,
      ok: true,
      algorithm: "ed25519",
      publicKey: key.publicKey,
      fingerprint: key.fingerprint,
      source: key.source,
      keyFile,
      created: key.created,
    },
    human,
  };
}
