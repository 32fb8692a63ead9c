/**
 * E2B terminal lane preflight (live only, before a run directory exists): `E2B_DEBUG` refused
 * (with it the SDK fakes kills, so no release could be proven), `E2B_API_KEY` present (by name;
 * its value stays in memory for the SDK), and where the SDK connects (`E2B_API_URL`,
 * `E2B_SANDBOX_URL`, `E2B_DOMAIN`; E2B's cloud when unset). `checkE2BTemplate` (doctor) looks
 * the template up without creating anything.
 */
import { HumanishError } from "../../errors.ts";
import { DEFAULT_E2B_TEMPLATE, type E2BConnection, e2bTemplateExists } from "../../sandbox/e2b.ts";

/** What the lane needs to reach E2B. The key is a secret of the run's writer. */
export interface E2BAccess {
  apiKey: string;
  connection: E2BConnection;
  template: string;
}

/** Env names the lane reads (values never recorded). */
export const E2B_ENV = { key: "E2B_API_KEY", debug: "E2B_DEBUG", apiUrl: "E2B_API_URL", sandboxUrl: "E2B_SANDBOX_URL", domain: "E2B_DOMAIN" } as const;

/**
 * Checks the env for an E2B run.
 * @throws HumanishError `HUMANISH_E2B_DEBUG_REFUSED`, `HUMANISH_TERMINAL_LAB_KEYS_MISSING`.
 */
export function resolveE2BAccess(env: Record<string, string | undefined>, template: string = DEFAULT_E2B_TEMPLATE): E2BAccess {
  const debug = env[E2B_ENV.debug];
  if (debug !== undefined && debug !== "") {
    throw new HumanishError(
      "HUMANISH_E2B_DEBUG_REFUSED",
      "E2B_DEBUG is set: in debug mode the E2B SDK skips real kills, so no sandbox release could be proven; nothing was started.",
      { next: "unset E2B_DEBUG (it is for E2B's own local development), then run again." },
    );
  }
  const apiKey = env[E2B_ENV.key]?.trim();
  if (!apiKey) {
    throw new HumanishError("HUMANISH_TERMINAL_LAB_KEYS_MISSING", "execution.target e2b-terminal needs E2B_API_KEY; it is not set. Nothing was started.", {
      next: "export E2B_API_KEY=… (or pass --env-file with it), or set execution.target: docker to run locally.",
    });
  }
  const connection: E2BConnection = {
    requestTimeoutMs: 60_000,
    ...(env[E2B_ENV.apiUrl] ? { apiUrl: env[E2B_ENV.apiUrl] } : {}),
    ...(env[E2B_ENV.sandboxUrl] ? { sandboxUrl: env[E2B_ENV.sandboxUrl] } : {}),
    ...(env[E2B_ENV.domain] ? { domain: env[E2B_ENV.domain] } : {}),
  };
  return { apiKey, connection, template };
}

/** A doctor check's outcome (no secret in it). */
export interface E2BCheck {
  name: string;
  ok: boolean;
  detail: string;
  next?: string;
}

/**
 * Doctor checks of an E2B terminal lab: the env (debug off, key present by name) and the
 * template looked up by name — nothing is created. Never throws.
 */
export async function checkE2BTemplate(env: Record<string, string | undefined>, template: string = DEFAULT_E2B_TEMPLATE): Promise<E2BCheck[]> {
  let access: E2BAccess;
  try {
    access = resolveE2BAccess(env, template);
  } catch (e) {
    const h = e as HumanishError;
    return [{ name: "e2b-env", ok: false, detail: `${h.code}: ${h.message}`, ...(h.next ? { next: h.next } : {}) }];
  }
  const checks: E2BCheck[] = [
    { name: "e2b-env", ok: true, detail: `E2B_API_KEY is set (value not shown); E2B_DEBUG unset; API ${access.connection.apiUrl ?? "E2B cloud"}` },
  ];
  try {
    const exists = await e2bTemplateExists(template, { apiKey: access.apiKey, connection: access.connection });
    checks.push(
      exists
        ? { name: "e2b-template", ok: true, detail: `template ${template} exists (looked up, nothing created)` }
        : {
            name: "e2b-template",
            ok: false,
            detail: `template ${template} was not found for this key`,
            next: `build or publish template ${template} in E2B, or use ${DEFAULT_E2B_TEMPLATE}`,
          },
    );
  } catch (e) {
    const h = e as HumanishError;
    checks.push({ name: "e2b-template", ok: false, detail: `${h.code ?? "error"}: ${h.message}`, ...(h.next ? { next: h.next } : {}) });
  }
  return checks;
}
