/**
 * Shared setup of the restricted-launcher tests: a temp operator home with a fake file-backed
 * ChatGPT login (no real account: its tokens are unsigned test JWTs that only the fake model
 * server accepts), the fake Responses server, and the environment the launcher is given.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHumanishError } from "../../../src/errors.ts";
import { type FakeOpenAI, type FakeScenario, startFakeOpenAI } from "../../support/fake-openai/server.ts";

/** The code `f` throws: a HumanishError's code, `non-humanish: …` for any other throw, undefined when it returns. */
export function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return isHumanishError(e) ? e.code : `non-humanish: ${String(e)}`;
  }
  return undefined;
}

/** The execution identity of an analyst session under the qualified profile. */
export const ANALYST_IDENTITY = {
  transport: "codex-app-server-stdio",
  authClass: "chatgpt-file",
  billing: "account-unknown",
  model: "gpt-5.5",
  effort: "low",
  toolPolicy: "codex-no-tools-v1",
  cliVersion: "0.171.0",
} as const;

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString("base64url");

/** An unsigned JWT-shaped test token (Codex decodes the claims; nothing verifies the signature offline). */
export function fakeJwt(claims: Record<string, unknown>): string {
  return `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.dGVzdA`;
}

/** The access token the fake login holds; the fake server accepts only it. */
export function fakeAccessToken(): string {
  return fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600, "https://api.openai.com/auth": { chatgpt_account_id: "acct-test" } });
}

/** What a login file looks like: `chatgpt` (tokens) or `apikey` (an API-key login). */
export type FakeLoginShape = "chatgpt" | "apikey";

/** Writes `<home>/.codex/auth.json` (0600) of the given shape; returns its path. */
export function writeFakeLogin(home: string, shape: FakeLoginShape, accessToken: string): string {
  const dir = join(home, ".codex");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, "auth.json");
  const body =
    shape === "chatgpt"
      ? {
          auth_mode: "chatgpt",
          OPENAI_API_KEY: null,
          tokens: {
            id_token: fakeJwt({
              email: "seat@example.test",
              exp: Math.floor(Date.now() / 1000) + 3600,
              "https://api.openai.com/auth": { chatgpt_plan_type: "plus", chatgpt_account_id: "acct-test", chatgpt_user_id: "user-test" },
            }),
            access_token: accessToken,
            refresh_token: "refresh-token-for-tests",
            account_id: "acct-test",
          },
          last_refresh: new Date().toISOString(),
        }
      : { auth_mode: "apikey", OPENAI_API_KEY: "fake-api-key-for-tests" };
  writeFileSync(file, JSON.stringify(body), { mode: 0o600 });
  return file;
}

/** One test's world: operator home, cache dir, fake server, and the env handed to the launcher. */
export interface CodexWorld {
  root: string;
  home: string;
  cache: string;
  fake: FakeOpenAI;
  env: Record<string, string>;
  authPath: string;
  cleanup(): Promise<void>;
}

/** PATH with the repo's node_modules/.bin first, where the pinned `@openai/codex` launcher lives. */
export const REPO_BIN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin");

/** Creates a world with a fake login of `shape` and a fake server following `scenario`. */
export function codexWorld(scenario: FakeScenario, shape: FakeLoginShape = "chatgpt"): CodexWorld {
  const root = mkdtempSync(join(tmpdir(), "humanish-codex-world-"));
  const home = join(root, "home");
  const cache = join(root, "cache");
  mkdirSync(home, { mode: 0o700 });
  const token = fakeAccessToken();
  const authPath = writeFakeLogin(home, shape, token);
  const fake = startFakeOpenAI({ apiKey: token, scenario, model: "gpt-5.5" });
  const env = { HOME: home, XDG_CACHE_HOME: cache, PATH: `${REPO_BIN}:/usr/bin:/bin`, LANG: "C.UTF-8", HUMANISH_CODEX_TEST_PROVIDER_URL: fake.baseURL };
  return {
    root,
    home,
    cache,
    fake,
    env,
    authPath,
    async cleanup() {
      await fake.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
