/**
 * The test-only model-provider override: it points the restricted app-server at a loopback fake
 * of the Responses API so the real CLI can be exercised without a ChatGPT account.
 *
 * Rule (all must hold, else the launcher refuses with `HUMANISH_CODEX_UNSAFE_CONFIGURATION`):
 * the environment passed to the launcher names `HUMANISH_CODEX_TEST_PROVIDER_URL`; the process
 * runs under `bun test` (`NODE_ENV=test` in the real process environment, which `bun test` sets);
 * humanish is not a compiled binary (its modules are not served from Bun's embedded `/$bunfs/`);
 * and the URL is plain `http://127.0.0.1:<port>/v1`. An operator can therefore never reroute an
 * account seat: a shipped binary ignores nothing and refuses the variable outright.
 */
import { HumanishError } from "../../errors.ts";

/** Env name carrying the fake server's base URL (tests only). */
export const TEST_PROVIDER_ENV = "HUMANISH_CODEX_TEST_PROVIDER_URL";
/** Provider id the override declares in the private config. */
export const TEST_PROVIDER_ID = "humanish_test_fake";

/** The facts the rule is decided on (injected so the rule is pure and unit-testable). */
export interface TestProviderFacts {
  /** Value of {@link TEST_PROVIDER_ENV} in the launcher's env, if any. */
  url: string | undefined;
  /** `NODE_ENV` of the real process. */
  nodeEnv: string | undefined;
  /** Path of this module (`import.meta.path`); compiled binaries serve it from `/$bunfs/`. */
  modulePath: string;
}

/** The facts of the running process. */
export function currentTestProviderFacts(env: Record<string, string | undefined>): TestProviderFacts {
  return { url: env[TEST_PROVIDER_ENV], nodeEnv: process.env.NODE_ENV, modulePath: import.meta.path };
}

/**
 * Decides the override.
 * @returns the loopback base URL, or null when no override was asked for.
 * @throws HumanishError `HUMANISH_CODEX_UNSAFE_CONFIGURATION` when asked for outside tests or with a non-loopback URL.
 */
export function resolveTestProvider(f: TestProviderFacts): string | null {
  if (f.url === undefined || f.url === "") return null;
  const refuse = (why: string): never => {
    throw new HumanishError(
      "HUMANISH_CODEX_UNSAFE_CONFIGURATION",
      `${TEST_PROVIDER_ENV} is set but ${why}; the model-provider override exists only for humanish's own tests`,
      {
        next: `Unset ${TEST_PROVIDER_ENV}.`,
      },
    );
  };
  if (f.nodeEnv !== "test") refuse("this is not a test run (NODE_ENV is not test)");
  if (f.modulePath.startsWith("/$bunfs/") || f.modulePath.startsWith("B:/~BUN/")) refuse("humanish is a compiled binary");
  if (!/^http:\/\/127\.0\.0\.1:\d{1,5}\/v1$/.test(f.url)) refuse(`its value is not a loopback http://127.0.0.1:<port>/v1 URL`);
  return f.url;
}
