/**
 * Where model requests go, read the way the `openai` SDK reads it: `OPENAI_BASE_URL`, else
 * `https://api.openai.com/v1`. Any Responses-compatible server (an Azure-style gateway, vLLM, the
 * test fake) works by setting that one variable. Only the endpoint's host is evidence; the key
 * is named, never shown. The organization and project the key bills come from the host's
 * `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID`, never from a sandbox.
 */
import { HumanishError } from "../errors.ts";

/** The SDK's default endpoint. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Env NAMES a model key may come from, in priority order. */
export const MODEL_KEY_NAMES = ["CODEX_API_KEY", "OPENAI_API_KEY"] as const;

/** The resolved endpoint. */
export interface ModelEndpoint {
  /** Base URL without a trailing slash, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  /** `host[:port]` of the base URL (what the bundle records). */
  host: string;
  /** `OPENAI_BASE_URL` or `default`. */
  source: "OPENAI_BASE_URL" | "default";
  /** `OPENAI_ORG_ID` of the host: the organization the key bills (sent as `OpenAI-Organization`). */
  organization?: string;
  /** `OPENAI_PROJECT_ID` of the host: the project the key bills (sent as `OpenAI-Project`). */
  project?: string;
}

/** The host's organization and project choice, read as the SDK reads them. */
function billingScope(env: Record<string, string | undefined>): Pick<ModelEndpoint, "organization" | "project"> {
  const org = env.OPENAI_ORG_ID?.trim();
  const project = env.OPENAI_PROJECT_ID?.trim();
  return { ...(org ? { organization: org } : {}), ...(project ? { project } : {}) };
}

/**
 * Resolves the endpoint from an env.
 * @throws HumanishError `HUMANISH_MODEL_ENDPOINT_INVALID` when `OPENAI_BASE_URL` is not an
 *   http(s) URL.
 */
export function resolveEndpoint(env: Record<string, string | undefined>): ModelEndpoint {
  const raw = env.OPENAI_BASE_URL?.trim();
  if (!raw) return { baseURL: DEFAULT_BASE_URL, host: new URL(DEFAULT_BASE_URL).host, source: "default", ...billingScope(env) };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new HumanishError("HUMANISH_MODEL_ENDPOINT_INVALID", "OPENAI_BASE_URL is not a URL.", {
      next: "Set OPENAI_BASE_URL to the API base, e.g. https://api.openai.com/v1, or unset it.",
    });
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) {
    throw new HumanishError("HUMANISH_MODEL_ENDPOINT_INVALID", `OPENAI_BASE_URL must be an http(s) URL without credentials (got scheme ${url.protocol}).`, {
      next: "Set OPENAI_BASE_URL to the API base, e.g. https://api.openai.com/v1; put the key in OPENAI_API_KEY.",
    });
  }
  return { baseURL: raw.replace(/\/+$/, ""), host: url.host, source: "OPENAI_BASE_URL", ...billingScope(env) };
}

/** A model key: the NAME it came from and its value (the value stays in memory). */
export interface ModelKey {
  sourceName: string;
  value: string;
}

/** The first non-blank key among `names`, or undefined. */
export function resolveModelKey(env: Record<string, string | undefined>, names: readonly string[] = MODEL_KEY_NAMES): ModelKey | undefined {
  for (const name of names) {
    const v = env[name];
    if (typeof v === "string" && v.trim().length > 0) return { sourceName: name, value: v };
  }
  return undefined;
}
