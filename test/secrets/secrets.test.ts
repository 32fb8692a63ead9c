/** Which values are secret: known keys, credential-looking names (not their plain settings), marked names. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEnvFile } from "../../src/cli/env-file.ts";
import { looksSecretName, secretIn, secretValuesFromEnv } from "../../src/secrets/index.ts";

describe("secret values", () => {
  test("credential-looking names are secret; ordinary names and plain settings are not", () => {
    for (const n of ["OPENAI_API_KEY", "GH_TOKEN", "DB_PASSWORD", "SECRET_SAUCE", "SESSION_COOKIE", "MY_APIKEY", "CLIENTSECRET", "NPM_AUTH", "SENTRY_DSN"])
      expect(looksSecretName(n), n).toBe(true);
    for (const n of ["KIND", "MODE", "FLAG", "APP", "PWD", "MONKEY_MODE", "KEYBOARD"]) expect(looksSecretName(n), n).toBe(false);
    const env = { KIND: "docker", MODE: "live", FLAG: "true", AUTH_ENABLED: "true", AUTH_RETRIES: "12", API_TOKEN: "tok-123456", ZQ: "zq9-canary-7731-secret" };
    expect(secretValuesFromEnv(env)).toEqual(["tok-123456"]);
    expect(secretValuesFromEnv(env, ["ZQ"])).toEqual(["zq9-canary-7731-secret", "tok-123456"]);
    // A marked value is secret whatever it looks like (still at least 4 chars).
    expect(secretValuesFromEnv({ A: "true", B: "abc" }, ["A", "B"])).toEqual(["true"]);
  });

  test("secretIn finds a secret inside an identifier", () => {
    expect(secretIn("run-zq9-canary-7731-secret-1", ["zq9-canary-7731-secret"])).toBe("zq9-canary-7731-secret");
    expect(secretIn("jq-first-contact", ["zq9-canary-7731-secret", "abc"])).toBeUndefined();
  });
});

describe("--env-file secret marks", () => {
  test("`# humanish:secret` marks the next variable (blank lines and comments may sit between)", () => {
    const dir = mkdtempSync(join(tmpdir(), "humanish-envfile-"));
    writeFileSync(
      join(dir, ".env"),
      [
        "KIND=docker",
        "# humanish:secret",
        "",
        "# the vault phrase",
        "PHRASE='open sesame'",
        "MODE=live",
        "#humanish:secret",
        "export TOKENISH=abcd1234",
        "",
      ].join("\n"),
    );
    const f = loadEnvFile(".env", dir);
    expect(f.env).toMatchObject({ KIND: "docker", PHRASE: "open sesame", MODE: "live", TOKENISH: "abcd1234" });
    expect(f.secretNames).toEqual(["PHRASE", "TOKENISH"]);
  });
});
