/**
 * The private config the restricted app-server runs with, and the check of its effective
 * config (`config/read` with layers) against it. Pure: no I/O.
 */
import { TEST_PROVIDER_ID } from "./test-provider.ts";
import type { CodexAccountProfile } from "./types.ts";

type Json = Record<string, unknown>;

/** The ChatGPT backend a file-backed ChatGPT login talks to; any other value is an alternate endpoint. */
export const CHATGPT_BASE_URL = "https://chatgpt.com/backend-api/";

/**
 * Features switched off: anything that would add a tool, a host integration, a memory, a plugin
 * or a hook. Code-mode dispatch is off too, so dynamic tools are called directly.
 */
export const DISABLED_FEATURES = [
  "apps",
  "plugins",
  "hooks",
  "shell_tool",
  "shell_snapshot",
  "view_image",
  "image_generation",
  "skill_search",
  "skill_mcp_dependency_install",
  "multi_agent_v2",
  "browser_use",
  "browser_use_external",
  "computer_use",
  "memories",
  "external_agent_memory_import",
  "goals",
  "sleep_tool",
  "tool_suggest",
  "default_mode_request_user_input",
  "unbounded_connection_retries",
  "workspace_dependencies",
  "remote_plugin",
  "recommended_plugins",
  "in_app_local_automation",
  "code_mode",
  "code_mode_host",
  "code_mode_only",
] as const;

/** The restricted config as a nested object (the TOML file is rendered from it). */
export function restrictedConfig(profile: CodexAccountProfile, testProviderUrl: string | null): Json {
  const features: Json = { skip_host_skill_discovery: true };
  for (const f of DISABLED_FEATURES) features[f] = false;
  const cfg: Json = {
    model: profile.model,
    model_provider: testProviderUrl ? TEST_PROVIDER_ID : "openai",
    model_reasoning_effort: profile.effort,
    approval_policy: "never",
    sandbox_mode: "read-only",
    forced_login_method: "chatgpt",
    cli_auth_credentials_store: "file",
    project_doc_max_bytes: 0,
    web_search: "disabled",
    include_permissions_instructions: false,
    include_environment_context: false,
    include_apps_instructions: false,
    include_collaboration_mode_instructions: false,
    check_for_update_on_startup: false,
    history: { persistence: "none" },
    analytics: { enabled: false },
    agents: { enabled: false, max_threads: 1, max_depth: 1 },
    skills: { bundled: { enabled: false } },
    features,
  };
  if (testProviderUrl) {
    cfg.model_providers = {
      [TEST_PROVIDER_ID]: {
        name: "humanish test fake",
        base_url: testProviderUrl,
        wire_api: "responses",
        requires_openai_auth: true,
        request_max_retries: 0,
        stream_max_retries: 0,
        supports_websockets: false,
      },
    };
  }
  return cfg;
}

function tomlValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new Error(`restricted config holds an unsupported TOML value ${JSON.stringify(v)}`);
}

/** Renders a nested object of scalars as TOML (tables for nested objects). */
export function renderToml(cfg: Json): string {
  const lines: string[] = [];
  const tables: Array<[string, Json]> = [];
  const walk = (prefix: string, obj: Json): void => {
    const head: string[] = [];
    for (const [k, v] of Object.entries(obj)) {
      if (v && typeof v === "object") tables.push([prefix ? `${prefix}.${k}` : k, v as Json]);
      else head.push(`${k} = ${tomlValue(v)}`);
    }
    if (prefix && head.length > 0) lines.push(`[${prefix}]`);
    lines.push(...head);
  };
  walk("", cfg);
  while (tables.length > 0) {
    const [name, obj] = tables.shift() as [string, Json];
    walk(name, obj);
  }
  return `${lines.join("\n")}\n`;
}

/** Structural equality, blind to object key order (TOML tables come back in any order). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (!a || !b || typeof a !== "object" || typeof b !== "object") return false;
  const ka = Object.keys(a as Json);
  const kb = Object.keys(b as Json);
  return ka.length === kb.length && ka.every((k) => k in (b as Json) && deepEqual((a as Json)[k], (b as Json)[k]));
}

function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.split(".")) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Json)[p];
  }
  return cur;
}

/**
 * Keys of the effective config that must be empty (null, `{}` or `[]`): instructions, MCP
 * servers, plugins, hooks, profiles, projects, alternate stores, endpoints and log sinks.
 */
export const MUST_BE_EMPTY = [
  "instructions",
  "developer_instructions",
  "model_instructions_file",
  "compact_prompt",
  "experimental_compact_prompt_file",
  "mcp_servers",
  "plugins",
  "marketplaces",
  "hooks",
  "notify",
  "profiles",
  "profile",
  "projects",
  "permissions",
  "default_permissions",
  "openai_base_url",
  "orchestrator",
  "experimental_thread_store",
  "experimental_thread_store_endpoint",
  "experimental_realtime_ws_base_url",
  "experimental_realtime_webrtc_call_base_url",
  "log_dir",
  "sqlite_home",
  "otel",
  "rollout_trace",
  "apps",
  "browser_use",
  "computer_use",
  "desktop",
  "memories",
  "realtime",
  "tools",
  "code_mode",
  "model_catalog_json",
  "responses_api_metadata",
  "js_repl_node_path",
  "js_repl_node_module_dirs",
  "cloud",
  "daybreak",
  "oss_provider",
  "forced_chatgpt_workspace_id",
  "experimental_use_unified_exec_tool",
] as const;

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.keys(v as Json).length === 0;
  return false;
}

/**
 * Checks a `config/read {includeLayers:true}` reply against the config humanish wrote.
 * Layers: exactly one `user` layer, our file, holding exactly what we wrote; any other layer
 * must be a `system` layer with an empty config (a system settings file with content is refused).
 * Values: every restricted value in effect, every key of {@link MUST_BE_EMPTY} empty, no model
 * provider besides the test override, the shell environment policy untouched, the ChatGPT
 * backend the default one.
 * @returns the problems found (empty when the config is the restricted one).
 */
export function checkEffectiveConfig(reply: unknown, expected: Json, configPath: string): string[] {
  const problems: string[] = [];
  const r = (reply ?? {}) as Json;
  const config = r.config as Json | undefined;
  const layers = r.layers;
  if (!config || typeof config !== "object") return ["config/read returned no config object"];
  if (!Array.isArray(layers)) return ["config/read returned no layers"];
  const users = layers.filter((l) => (l as Json)?.name && ((l as Json).name as Json).type === "user");
  if (users.length !== 1) problems.push(`expected exactly one user config layer, found ${users.length}`);
  for (const l of layers as Json[]) {
    const name = (l?.name ?? {}) as Json;
    if (name.type === "user") {
      if (name.file !== configPath) problems.push(`user config layer is ${String(name.file)}, not the private ${configPath}`);
      if (name.profile !== null && name.profile !== undefined) problems.push(`user config layer selects profile ${String(name.profile)}`);
      if (!deepEqual(l.config, expected)) problems.push("user config layer differs from the config humanish wrote");
    } else if (name.type === "system") {
      if (!isEmpty(l.config)) problems.push(`system config layer ${String(name.file)} is not empty (system settings are refused)`);
    } else {
      problems.push(`unexpected config layer of type ${String(name.type)}`);
    }
  }
  const flat = (prefix: string, obj: Json, out: Array<[string, unknown]>): void => {
    for (const [k, v] of Object.entries(obj)) {
      const p = prefix ? `${prefix}.${k}` : k;
      if (k === "model_providers") continue;
      if (v && typeof v === "object" && !Array.isArray(v)) flat(p, v as Json, out);
      else out.push([p, v]);
    }
  };
  const want: Array<[string, unknown]> = [];
  flat("", expected, want);
  for (const [path, v] of want) {
    const got = get(config, path);
    // Features are reported as a value or as `{enabled: value}` depending on the feature.
    const gotValue = got && typeof got === "object" && "enabled" in (got as Json) ? (got as Json).enabled : got;
    if (path === "agents.max_threads") {
      if (get(config, "agents.max_concurrent_threads_per_session") !== v) problems.push(`agents.max_concurrent_threads_per_session is not ${String(v)}`);
      continue;
    }
    if (gotValue !== v && !(path.startsWith("include_") && got === undefined))
      problems.push(`${path} is ${JSON.stringify(got)}, expected ${JSON.stringify(v)}`);
  }
  for (const key of MUST_BE_EMPTY) if (!isEmpty(config[key])) problems.push(`${key} must be empty`);
  const providers = (config.model_providers ?? {}) as Json;
  const expectedProviders = (expected.model_providers ?? {}) as Json;
  for (const id of Object.keys(providers)) if (!(id in expectedProviders)) problems.push(`model_providers.${id} is not allowed`);
  for (const [id, p] of Object.entries(expectedProviders)) {
    const got = providers[id] as Json | undefined;
    if (!got || got.base_url !== (p as Json).base_url) problems.push(`model_providers.${id} is not the test override`);
    else
      for (const k of ["env_key", "experimental_bearer_token", "auth", "http_headers", "env_http_headers", "query_params", "credential_file", "aws"])
        if (!isEmpty(got[k])) problems.push(`model_providers.${id}.${k} must be empty`);
  }
  const shell = (config.shell_environment_policy ?? {}) as Json;
  for (const [k, v] of Object.entries(shell)) if (!isEmpty(v)) problems.push(`shell_environment_policy.${k} must be unset`);
  if (config.chatgpt_base_url !== CHATGPT_BASE_URL) problems.push(`chatgpt_base_url is ${JSON.stringify(config.chatgpt_base_url)}, not ${CHATGPT_BASE_URL}`);
  return problems;
}
