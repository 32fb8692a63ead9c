/**
 * The lab a person is building in `humanish init`: answers → a `humanish.lab.v2` document →
 * YAML, validated by the lab loader's own `parseLab` (src/lab), so the wizard holds no second
 * copy of the rules. Templates are complete drafts; the wizard changes one
 * answer at a time and validates the whole draft after each change, so every error the person
 * sees is the loader's message about the field they just answered.
 */
import { stringify } from "yaml";
import { parseLab } from "../lab/index.ts";

/** Route a lab studies: a command-line product in a sandbox, or a loopback web app in a browser. */
export type InitRoute = "terminal" | "browser";

/**
 * A `--template` name: a route's starter, or `computer-use` (the browser route with an OpenAI
 * computer-use participant on the embedded TodoMVC, runnable as is).
 */
export type InitTemplate = InitRoute | "computer-use";

/** Every `--template` name. */
export const INIT_TEMPLATES: readonly InitTemplate[] = ["terminal", "browser", "computer-use"];

/** How a browser study's app is served: already running, by a command, or from a static folder. */
export type InitServe = { kind: "running" } | { kind: "command"; command: string } | { kind: "static"; root: string };

/** One task: a goal for the participant and a hidden check (terminal: a command; browser: an observation rule). */
export interface InitTask {
  id: string;
  goal: string;
  /** Terminal: `{run, expectExit?}`. Browser: `{textIncludes? , urlIncludes?, urlPathEquals?}`. */
  check: Record<string, unknown>;
}

/** Every answer of the wizard (and of a template). */
export interface InitAnswers {
  route: InitRoute;
  id: string;
  title?: string;
  /** Terminal: product name, public surface URLs, install commands (may be empty). */
  productName: string;
  publicSurfaces: string[];
  install: string[];
  /** Browser: loopback app URL and how it is served. */
  appUrl: string;
  serve: InitServe;
  /** `scripted-terminal` | `codex-exec` | `scripted-browser` | `openai-computer-use`. */
  actorType: string;
  /** Model for an LLM participant (absent = the route's recorded default). */
  model?: string;
  mission?: string;
  /** Scripted participants: steps as YAML values (terminal `{run}`, browser one-key mappings). */
  steps: unknown[];
  tasks: InitTask[];
  mode: "dry-run" | "live";
  /** Caps: minutes of participant wall clock and USD of spend (absent = not declared). */
  maxMinutes?: number;
  maxUsd?: number;
  /**
   * `review.analysis`: the post-run analyst (USD cap for openai), `false` for none, absent for the
   * lab's default (openai only when live, keyed and capped by scenario.caps.maxTotalUsd).
   */
  analysis?: { provider: "openai"; maxCost: number } | { provider: "codex" } | false;
}

/** The analyst a template lab names: openai under a 1 USD cap (it runs only live and with OPENAI_API_KEY). */
export const TEMPLATE_ANALYSIS = { provider: "openai", maxCost: 1 } as const;

/** Scripted actor per route. */
export const SCRIPTED_ACTOR: Record<InitRoute, string> = { terminal: "scripted-terminal", browser: "scripted-browser" };
/** LLM actor per route. */
export const LLM_ACTOR: Record<InitRoute, string> = { terminal: "codex-exec", browser: "openai-computer-use" };
/** Model offered by default for each LLM actor. */
export const DEFAULT_MODEL: Record<string, string> = { "codex-exec": "gpt-5-codex", "openai-computer-use": "computer-use-preview" };

/** True when `actorType` runs no model (steps instead). */
export function isScripted(actorType: string): boolean {
  return actorType === "scripted-terminal" || actorType === "scripted-browser";
}

/**
 * The complete starter draft of a template. Terminal: a scripted participant discovers `jq`
 * (installed from Debian's packages in the sandbox) and uses it on JSON it writes; two tasks
 * with hidden checks. Browser: a scripted participant opens a loopback app that is already
 * running and keeps a screenshot; one task checked on the URL.
 */
export function templateAnswers(route: InitTemplate, id?: string): InitAnswers {
  if (route === "computer-use") return computerUseTemplate(id);
  if (route === "terminal") {
    return {
      route,
      id: id ?? "my-cli-study",
      title: "First contact with jq",
      productName: "jq",
      publicSurfaces: ["https://jqlang.org/manual/"],
      install: ["apt-get update -qq && apt-get install -y -qq --no-install-recommends jq"],
      appUrl: "http://127.0.0.1:4173/",
      serve: { kind: "running" },
      actorType: "scripted-terminal",
      steps: [
        { run: "jq --help | head -n 20" },
        { run: `printf '{"name":"humanish","tags":["a","b"]}' > data.json` },
        { run: "jq -r .name data.json > name.txt" },
        { run: "jq '.tags | length' data.json > count.txt" },
      ],
      tasks: [
        {
          id: "extract-name",
          goal: `Write {"name":"humanish","tags":["a","b"]} to data.json, then use jq to save the value of its name field to name.txt`,
          check: { run: `test "$(cat name.txt)" = humanish` },
        },
        { id: "count-tags", goal: "Use jq to save the number of tags in data.json to count.txt", check: { run: `test "$(cat count.txt)" = 2` } },
      ],
      mode: "dry-run",
      maxMinutes: 10,
      maxUsd: 0,
      analysis: TEMPLATE_ANALYSIS,
    };
  }
  return {
    route,
    id: id ?? "my-web-study",
    title: "First visit to my web app",
    productName: "my-app",
    publicSurfaces: [],
    install: [],
    appUrl: "http://127.0.0.1:4173/",
    serve: { kind: "running" },
    actorType: "scripted-browser",
    steps: [{ open: "/" }, { screenshot: "home" }],
    tasks: [{ id: "open-home", goal: "Open the app's home page", check: { urlPathEquals: "/" } }],
    mode: "dry-run",
    maxMinutes: 10,
    maxUsd: 0,
    analysis: TEMPLATE_ANALYSIS,
  };
}

/**
 * The computer-use starter: an OpenAI computer-use model on the TodoMVC compiled into humanish
 * (no app to start), three tasks with hidden checks on the page text, a dry run by default and
 * a spend cap the rate table can enforce for `computer-use-preview`. Live: set OPENAI_API_KEY
 * (and OPENAI_BASE_URL for another Responses endpoint) and add `--live`.
 */
function computerUseTemplate(id?: string): InitAnswers {
  return {
    route: "browser",
    id: id ?? "my-computer-use-study",
    title: "A computer-use model's first visit to TodoMVC",
    productName: "todomvc",
    publicSurfaces: [],
    install: [],
    appUrl: "http://127.0.0.1:41731/",
    serve: { kind: "static", root: "embedded:todomvc-vanillajs" },
    actorType: "openai-computer-use",
    model: DEFAULT_MODEL["openai-computer-use"],
    mission: "You have never used this todo app. Use it the way a new user would.",
    steps: [],
    tasks: [
      { id: "add-two-todos", goal: 'Add two todos, "Buy milk" and "Walk the dog".', check: { textIncludes: ["Buy milk", "Walk the dog", "2 items left"] } },
      { id: "complete-one", goal: 'Mark "Buy milk" as completed.', check: { textIncludes: ["Walk the dog", "1 item left", "Clear completed (1)"] } },
      {
        id: "clear-completed",
        goal: 'Clear the completed todo so that only "Walk the dog" is left.',
        check: { textIncludes: ["Walk the dog", "1 item left"], textExcludes: ["Buy milk", "Clear completed (1)"] },
      },
    ],
    mode: "dry-run",
    maxMinutes: 10,
    maxUsd: 2,
  };
}

/** The `humanish.lab.v2` document for `a`, keys in reading order. */
export function buildLabDocument(a: InitAnswers): Record<string, unknown> {
  const actor: Record<string, unknown> = { type: a.actorType };
  // A scripted participant reads no brief (the loader warns that a mission there is inert).
  if (a.mission && !isScripted(a.actorType)) actor.mission = a.mission;
  if (!isScripted(a.actorType) && a.model) actor.model = a.model;
  if (isScripted(a.actorType)) actor.steps = a.steps;
  if (a.tasks.length) actor.tasks = a.tasks.map((t) => ({ id: t.id, goal: t.goal, check: t.check }));

  const subject: Record<string, unknown> =
    a.route === "terminal"
      ? {
          source: "terminal-product",
          product: {
            name: a.productName,
            publicSurfaces: a.publicSurfaces,
            ...(a.install.length ? { install: a.install } : {}),
          },
        }
      : {
          source: "app-url",
          appUrl: a.appUrl,
          ...(a.serve.kind === "command" ? { serve: { command: a.serve.command } } : {}),
          ...(a.serve.kind === "static" ? { serve: { static: { root: a.serve.root } } } : {}),
        };

  const execution: Record<string, unknown> =
    a.route === "terminal"
      ? // Install commands download packages, so the sandbox needs the network while it runs.
        { target: "docker", ...(a.install.length && isScripted(a.actorType) ? { network: "bridge" } : {}) }
      : { target: "local" };

  const caps: Record<string, number> = {};
  if (a.maxMinutes !== undefined) caps.maxMinutes = a.maxMinutes;
  if (a.maxUsd !== undefined) caps.maxUsd = a.maxUsd;

  return {
    schema: "humanish.lab.v2",
    id: a.id,
    ...(a.title ? { title: a.title } : {}),
    subject,
    actors: [actor],
    execution,
    ...(a.analysis !== undefined ? { review: { analysis: a.analysis } } : {}),
    scenario: { mode: a.mode, ...(Object.keys(caps).length ? { caps } : {}) },
  };
}

/** YAML text of the lab for `a` (what is shown and written). */
export function renderLabYaml(a: InitAnswers): string {
  return stringify(buildLabDocument(a), { lineWidth: 0 });
}

/** Result of validating a draft with the loader. */
export type DraftCheck =
  | { ok: true; yaml: string; warnings: { code: string; message: string; path?: string }[] }
  | { ok: false; yaml: string; message: string };

/** Renders `a` to YAML and parses it with the lab loader's `parseLab` (the same rules `lab run` applies). */
export function checkDraft(a: InitAnswers): DraftCheck {
  const yaml = renderLabYaml(a);
  const r = parseLab(yaml);
  if (r.ok) return { ok: true, yaml, warnings: (r.warnings ?? []) as { code: string; message: string; path?: string }[] };
  return { ok: false, yaml, message: r.error.message };
}

/**
 * Validator for one prompt: applies `patch` to a copy of `a` and returns the loader's message
 * when the resulting lab is invalid, or undefined when it is valid (clack's `validate` contract).
 */
export function validateWith(a: InitAnswers, patch: Partial<InitAnswers>): string | undefined {
  const r = checkDraft({ ...a, ...patch });
  // The `lab:<line>:<col>: ` prefix points into YAML the person has not seen yet; the field path stays.
  return r.ok ? undefined : r.message.replace(/^lab:\d+:\d+:\s*/, "");
}

/**
 * Parses one scripted-browser step typed in the wizard's short form into its YAML value:
 * `open /path`, `click X Y [left|right|middle]`, `type TEXT`, `press KEY[+KEY…]`,
 * `scroll DY` or `scroll DX DY`, `wait MS`, `waitForText TEXT`, `screenshot [label]`.
 * Returns a message for an unknown verb or a malformed number; the lab schema judges the rest.
 */
export function parseBrowserStep(line: string): { ok: true; step: unknown } | { ok: false; message: string } {
  const text = line.trim();
  const m = /^(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) return { ok: false, message: "type a step, e.g. open /" };
  const verb = m[1]!;
  const rest = (m[2] ?? "").trim();
  const num = (s: string | undefined): number | null => (s !== undefined && /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : null);
  const parts = rest.split(/\s+/).filter(Boolean);
  switch (verb) {
    case "open":
      return { ok: true, step: { open: rest || "/" } };
    case "click": {
      const x = num(parts[0]);
      const y = num(parts[1]);
      if (x === null || y === null) return { ok: false, message: "click needs two numbers: click X Y [left|right|middle]" };
      return { ok: true, step: { click: { x, y, ...(parts[2] ? { button: parts[2] } : {}) } } };
    }
    case "type":
      return { ok: true, step: { type: rest } };
    case "press": {
      const keys = rest
        .split("+")
        .map((k) => k.trim())
        .filter(Boolean);
      return { ok: true, step: { press: keys.length === 1 ? keys[0] : keys } };
    }
    case "scroll": {
      const a = num(parts[0]);
      const b = num(parts[1]);
      if (a === null) return { ok: false, message: "scroll needs pixels: scroll DY or scroll DX DY" };
      return { ok: true, step: { scroll: b === null ? { scrollY: a } : { scrollX: a, scrollY: b } } };
    }
    case "wait": {
      const ms = num(parts[0]);
      if (ms === null) return { ok: false, message: "wait needs milliseconds: wait 500" };
      return { ok: true, step: { wait: { ms } } };
    }
    case "waitForText":
      return { ok: true, step: { waitForText: rest } };
    case "screenshot":
      return { ok: true, step: rest ? { screenshot: rest } : "screenshot" };
    default:
      return { ok: false, message: `unknown step \`${verb}\`; use open, click, type, press, scroll, wait, waitForText or screenshot` };
  }
}

/** Mission offered by default to an LLM participant. */
export const DEFAULT_MISSION: Record<InitRoute, string> = {
  terminal: "Discover the product from its public surfaces and use it for the tasks below; report anything confusing.",
  browser: "Use the app as a first-time visitor would for the tasks below; report anything confusing.",
};
