/**
 * The lab manifest schema `humanish.lab.v2` (reference contracts.md §1, §6.3; issue 2 §3–§4,
 * issue 4 §6): zod schemas for the two routes humanish runs, and the TypeScript types every
 * other layer imports.
 *
 * Every object is strict: an unknown key is rejected with the nearest known key, and a key that
 * belongs to the other route is rejected as "cannot act here". Nothing is coerced: `"true"` is
 * not a boolean, `1.10` is the number 1.1 and never the string "1.10".
 *
 * Two routes (ARCHITECTURE.md "Routes and targets"):
 * - terminal: `subject.source: terminal-product`, actors `scripted-terminal` | `codex-exec`,
 *   `execution.target: docker` (default) | `e2b-terminal`.
 * - browser: `subject.source: app-url` (loopback only), actors `scripted-browser` |
 *   `openai-computer-use`, `execution.target: local` (default) | `e2b-desktop`.
 */
import { z } from "zod";
import { nonBlank, strictObject, type ForeignKeys } from "./strict.ts";

/** The only accepted value of the top-level `schema` key. */
export const LAB_SCHEMA_ID = "humanish.lab.v2";

/**
 * Working directory of a terminal study inside the sandbox. `product.install` commands,
 * scripted steps, the Codex participant and the hidden task checks all run with this cwd;
 * it exists (mode 0777) before the first install command runs.
 */
export const TERMINAL_STUDY_DIR = "/home/user/study";

/** Lab, product and subject ids: start alphanumeric so they never look like a path or a flag. */
export const LAB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Task ids (reference §1.4): alphanumeric start, then `[A-Za-z0-9_-]`. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** Exact semver (no ranges, no `v` prefix, no `latest`). */
export const EXACT_SEMVER_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
/** Docker image references we accept in `execution.image` (name[:tag][@digest], lower-case path). */
export const IMAGE_REF_PATTERN = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

/** Screen geometry of a participant's desktop, in CSS pixels, and its device pixel ratio. */
export interface DevicePreset {
  width: number;
  height: number;
  deviceScaleFactor: number;
}

/** Device presets (reference contracts.md §1.4 / subsystems.md §5). `desktop` is the default. */
export const DEVICE_PRESETS = {
  desktop: { width: 1440, height: 950, deviceScaleFactor: 1 },
  mobile: { width: 414, height: 896, deviceScaleFactor: 3 },
  "small-mobile": { width: 360, height: 740, deviceScaleFactor: 3 },
  "narrow-mobile": { width: 320, height: 700, deviceScaleFactor: 2 },
  tablet: { width: 820, height: 1180, deviceScaleFactor: 2 },
  wide: { width: 1920, height: 1080, deviceScaleFactor: 1 },
} as const satisfies Record<string, DevicePreset>;

/** A device preset name. */
export type DeviceName = keyof typeof DEVICE_PRESETS;

/** Devices a browser study runs per `actors[0].count`: 1 → desktop; 2 → desktop + mobile. */
export const DEVICES_BY_COUNT: Readonly<Record<1 | 2, readonly DeviceName[]>> = {
  1: ["desktop"],
  2: ["desktop", "mobile"],
};

/**
 * Key names a `press` step may use (reference subsystems.md §3.5, matched case-insensitively):
 * single `[a-z0-9]`, `F1`–`F12`, modifiers, navigation keys and the named punctuation.
 */
export const BROWSER_KEY_NAMES: readonly string[] = [
  "CTRL", "CONTROL", "ALT", "SHIFT", "META", "SUPER", "CMD",
  "ENTER", "RETURN", "TAB", "ESC", "ESCAPE", "SPACE", " ",
  "BACKSPACE", "DELETE", "INSERT", "HOME", "END", "PAGEUP", "PAGEDOWN",
  "ARROWUP", "UP", "ARROWDOWN", "DOWN", "ARROWLEFT", "LEFT", "ARROWRIGHT", "RIGHT",
  "+", "-", "=", ",", ".", "/", "\\", ";", "'", "[", "]", "`",
  ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
];

/** True when `name` is in the closed key-name list (case-insensitive). */
export function isBrowserKeyName(name: string): boolean {
  if (/^[a-z0-9]$/i.test(name)) return true;
  return BROWSER_KEY_NAMES.includes(name.toUpperCase());
}

/** Default deadline of a `waitForText` step, in ms. */
export const WAIT_FOR_TEXT_DEFAULT_TIMEOUT_MS = 10_000;
/** Bounds of a `wait` step, in ms (reference subsystems.md §1.6). */
export const WAIT_MAX_MS = 30_000;
/** Pixels per wheel step and the wheel-step cap of one `scroll` (subsystems.md §3.4). */
export const SCROLL_PIXELS_PER_STEP = 120;
export const SCROLL_MAX_STEPS = 100;
/** Longest `type` text, in UTF-8 bytes (subsystems.md §1.6). */
export const TYPE_MAX_BYTES = 65_536;

// ---------------------------------------------------------------------------------------------
// Shared pieces

const labId = z.string().regex(LAB_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_`, `.` and `-`" });
const taskId = z.string().regex(TASK_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_` and `-`" });
const nonNegNumber = z.number().finite().nonnegative();
const posInt = z.number().int().positive();
const exitCode = z.number().int().min(0).max(255);

const REFERENCE_ONLY = "is a reference humanish key that this humanish does not support";

const topForeign: ForeignKeys = {
  review: REFERENCE_ONLY,
  defaults: REFERENCE_ONLY,
  comms: REFERENCE_ONLY,
  personas: REFERENCE_ONLY,
};

/** `scenario.caps` (reference §1.6). All optional, non-negative; `maxJobs` an integer. */
export const CapsSchema = strictObject({
  /** Spend cap in USD; 0 = no spend allowed. */
  maxUsd: nonNegNumber.optional(),
  /** Cap on billable jobs (terminal: known billable job count). */
  maxJobs: z.number().int().nonnegative().optional(),
  /** Wall-clock cap on the participant, in minutes; must be > 0 for a live terminal study. */
  maxMinutes: nonNegNumber.optional(),
}, { maxTotalUsd: REFERENCE_ONLY });

/** `scenario` (reference §1.6): the spend declaration. Absent mode = `dry-run` (invariant 3). */
export const ScenarioSchema = strictObject({
  mode: z.enum(["dry-run", "live"]).default("dry-run"),
  caps: CapsSchema.optional(),
}, { ref: REFERENCE_ONLY, inline: REFERENCE_ONLY });

/**
 * `policies` (reference §1.7): four deny-by-default credential-boundary declarations. They are
 * recorded as evidence only — humanish has no channel that injects any of these credentials,
 * so `true` produces a warning.
 */
export const PoliciesSchema = strictObject({
  allowPrivateRepoAccess: z.boolean().default(false),
  allowProviderCredentials: z.boolean().default(false),
  allowPaymentCredentials: z.boolean().default(false),
  allowGitHubMutation: z.boolean().default(false),
}, {
  redactRepos: REFERENCE_ONLY,
  redactScreenshots: REFERENCE_ONLY,
  allowPublicTargets: "is not supported: the browser route only drives a loopback appUrl",
  mediaPermission: REFERENCE_ONLY,
});

const reasoningEffort = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

// ---------------------------------------------------------------------------------------------
// Terminal route

const NOT_ON_TERMINAL = "only acts on the browser route (subject.source app-url)";
const NOT_ON_BROWSER = "only acts on the terminal route (subject.source terminal-product)";
const NO_MODEL = "cannot act on a scripted participant: it runs no model";

/**
 * A terminal task's hidden check: a shell command run (via `bash -lc`) in the sandbox, in
 * {@link TERMINAL_STUDY_DIR}, after the participant ends. Passes when it exits `expectExit`
 * (default 0). Never shown to the participant.
 */
export const TerminalCheckSchema = strictObject({
  run: nonBlank("a non-empty shell command"),
  expectExit: exitCode.default(0),
}, {
  textIncludes: NOT_ON_TERMINAL, textExcludes: NOT_ON_TERMINAL, urlIncludes: NOT_ON_TERMINAL, urlPathEquals: NOT_ON_TERMINAL,
});

/** One task (reference §6.3, issue 2 §4): the `goal` goes into the brief; `check` never does. */
export const TerminalTaskSchema = strictObject({
  id: taskId,
  goal: nonBlank(),
  check: TerminalCheckSchema,
}, { success: "is the reference's browser success rule; a terminal task uses `check: {run, expectExit}`" });

/**
 * One scripted-terminal step: `run` is a shell command (`bash -lc`) run as the participant in
 * {@link TERMINAL_STUDY_DIR}. `expectExit` (optional) is the exit code the author expects; on a
 * mismatch the scripted participant stops (completion reason `step_failed`, a finding about the
 * product) and the remaining steps do not run; hidden checks still run.
 */
export const TerminalStepSchema = strictObject({
  run: nonBlank("a non-empty shell command"),
  expectExit: exitCode.optional(),
});

const terminalTasks = z.array(TerminalTaskSchema).min(1, { message: "must list at least one task when present" }).optional();

/** `scripted-terminal`: a participant with no model that runs `steps[]` one at a time. */
export const ScriptedTerminalActorSchema = strictObject({
  type: z.literal("scripted-terminal"),
  /** Terminal studies run exactly one participant. */
  count: z.literal(1).optional(),
  persona: nonBlank().optional(),
  mission: nonBlank().optional(),
  tasks: terminalTasks,
  steps: z.array(TerminalStepSchema).min(1, { message: "must list at least one step" }),
}, { model: NO_MODEL, reasoningEffort: NO_MODEL });

/** `codex-exec`: the OpenAI Codex CLI run with `codex exec --json` inside the sandbox. */
export const CodexExecActorSchema = strictObject({
  type: z.literal("codex-exec"),
  count: z.literal(1).optional(),
  persona: nonBlank().optional(),
  /** The participant brief (recorded in plaintext: public-safe author text). */
  mission: nonBlank().optional(),
  /** Model passed as `--model`; absent = the route's default, recorded as such. */
  model: nonBlank().optional(),
  reasoningEffort: reasoningEffort.optional(),
  tasks: terminalTasks,
}, { steps: "only acts on a scripted-terminal participant (codex-exec decides its own commands)" });

/** The terminal actor union, keyed by `type`. */
export const TerminalActorSchema = z.discriminatedUnion("type", [ScriptedTerminalActorSchema, CodexExecActorSchema]);

/**
 * `subject.product` (reference §1.3 / §5.1). `install` is a list of shell commands run as root
 * in the sandbox, in order, in {@link TERMINAL_STUDY_DIR}, before the participant starts and
 * with no key in their env (unkeyed); a failing command fails the run before the participant.
 */
export const ProductSchema = strictObject({
  name: z.string().regex(LAB_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_`, `.` and `-`" }),
  publicSurfaces: z.array(z.string().refine(isHttpUrl, { message: "must be an absolute http(s) URL" })).min(1, { message: "must list at least one public surface URL" }),
  install: z.array(nonBlank("a non-empty shell command")).min(1, { message: "must list at least one command when present" }).optional(),
}, {
  workdir: "is a desktop-cli key; terminal studies always run in " + TERMINAL_STUDY_DIR,
  upload: REFERENCE_ONLY,
});

/** `subject` on the terminal route. */
export const TerminalSubjectSchema = strictObject({
  source: z.literal("terminal-product"),
  product: ProductSchema,
}, {
  appUrl: NOT_ON_TERMINAL,
  serve: NOT_ON_TERMINAL,
  topology: REFERENCE_ONLY, exposure: REFERENCE_ONLY, publicTarget: REFERENCE_ONLY, repos: REFERENCE_ONLY,
  clone: REFERENCE_ONLY, localTree: REFERENCE_ONLY, env: REFERENCE_ONLY, envValues: REFERENCE_ONLY, state: REFERENCE_ONLY,
});

/**
 * `execution` on the terminal route (reference §1.5).
 * - `target`: `docker` (default; a local Docker sandbox) or `e2b-terminal` (parses and routes;
 *   live runs come later and fail before any spend; dry-run works).
 * - `timeoutMs`: accepted for compatibility but not consumed here (warns); the participant's
 *   deadline is `scenario.caps.maxMinutes`.
 * - `terminal`: `{transport: exec-stream, stdin: disabled}` — captured exec output, stdin closed.
 * - `runtimeAuth`: `openai-env` (codex-exec only): the runtime key rides in the Codex command's env.
 * - `runtime.version`: exact `@openai/codex` version (codex-exec only); absent → `latest` is
 *   resolved once and the exact version recorded.
 * - `image`: Docker image for the sandbox (target docker only); absent → the humanish sandbox image.
 * - `network`: `none` | `bridge` (target docker only). `bridge` attaches the sandbox to Docker's
 *   default bridge for the whole study. It is only accepted when something in the lab needs it:
 *   `product.install` commands (package downloads) or a `codex-exec` participant (which must
 *   install the Codex CLI and reach the model API). Default: `bridge` for codex-exec, else `none`.
 */
export const TerminalExecutionSchema = strictObject({
  target: z.enum(["docker", "e2b-terminal"]).default("docker"),
  timeoutMs: posInt.optional(),
  terminal: strictObject({
    transport: z.literal("exec-stream", { message: "must be exec-stream (captured exec output is not an interactive PTY)" }).default("exec-stream"),
    stdin: z.literal("disabled", { message: "must be disabled (participants run with stdin closed)" }).default("disabled"),
  }).default({ transport: "exec-stream", stdin: "disabled" }),
  runtimeAuth: z.literal("openai-env", { message: "must be openai-env" }).optional(),
  runtime: strictObject({
    version: z.string().regex(EXACT_SEMVER_PATTERN, { message: "must be an exact semver such as 0.171.0 (no ranges, no `latest`, no `v`)" }),
  }).optional(),
  image: z.string().regex(IMAGE_REF_PATTERN, { message: "must be a Docker image reference such as humanish-sandbox:1 or debian:bookworm-slim" }).optional(),
  network: z.enum(["none", "bridge"]).optional(),
}, {
  desktop: NOT_ON_TERMINAL,
  completionTimeoutMs: REFERENCE_ONLY,
  concurrency: REFERENCE_ONLY,
  caps: "moved: caps live in scenario.caps",
  egressAllow: REFERENCE_ONLY,
});

/** A whole terminal lab as parsed (before route-level normalisation). */
export const TerminalLabSchema = strictObject({
  schema: z.literal(LAB_SCHEMA_ID, { message: `must be exactly ${LAB_SCHEMA_ID}` }),
  id: labId,
  title: nonBlank().optional(),
  description: nonBlank().optional(),
  subject: TerminalSubjectSchema,
  actors: z.array(TerminalActorSchema),
  execution: TerminalExecutionSchema.default({ target: "docker", terminal: { transport: "exec-stream", stdin: "disabled" } }),
  scenario: ScenarioSchema.default({ mode: "dry-run" }),
  policies: PoliciesSchema.default({ allowPrivateRepoAccess: false, allowProviderCredentials: false, allowPaymentCredentials: false, allowGitHubMutation: false }),
}, topForeign);

// ---------------------------------------------------------------------------------------------
// Browser route

/**
 * A browser task's hidden check (reference §6.3 StopWhen rule, our `textExcludes` addition).
 * Evaluated after the participant ends, over every observation recorded during the session
 * (the final one included): the task passes when ONE observation satisfies ALL present
 * conditions. `text` is the page's visible text (`document.body.innerText`), `url` its URL.
 * - `textIncludes`: each string appears in the text (a string or a list of strings).
 * - `textExcludes`: no string appears in the text.
 * - `urlIncludes`: substring of the URL. `urlPathEquals`: exact URL path (starts with one `/`).
 */
export const BrowserCheckSchema = strictObject({
  textIncludes: z.union([nonBlank(), z.array(nonBlank()).min(1)]).optional(),
  textExcludes: z.union([nonBlank(), z.array(nonBlank()).min(1)]).optional(),
  urlIncludes: nonBlank().optional(),
  urlPathEquals: z.string().regex(/^\/(?!\/)/, { message: "must be a path starting with a single `/`" }).optional(),
}, {
  run: NOT_ON_BROWSER,
  expectExit: NOT_ON_BROWSER,
  appStatePathEquals: REFERENCE_ONLY,
}).superRefine((c, ctx) => {
  if (c.textIncludes === undefined && c.textExcludes === undefined && c.urlIncludes === undefined && c.urlPathEquals === undefined) {
    ctx.addIssue({ code: "custom", message: "needs at least one condition: textIncludes, textExcludes, urlIncludes or urlPathEquals" });
  }
}).transform((c) => ({
  ...(c.textIncludes !== undefined ? { textIncludes: toList(c.textIncludes) } : {}),
  ...(c.textExcludes !== undefined ? { textExcludes: toList(c.textExcludes) } : {}),
  ...(c.urlIncludes !== undefined ? { urlIncludes: c.urlIncludes } : {}),
  ...(c.urlPathEquals !== undefined ? { urlPathEquals: c.urlPathEquals } : {}),
}));

/** A browser task: goal for the brief, hidden observation check. */
export const BrowserTaskSchema = strictObject({
  id: taskId,
  goal: nonBlank(),
  check: BrowserCheckSchema,
}, { success: "is the reference's name; humanish uses `check`" });

/**
 * One scripted-browser step, normalised. Each YAML step is a one-key mapping (or the bare string
 * `screenshot`); coordinates are pixels of the participant's full screen frame (browser chrome
 * included) at its device geometry, origin top-left.
 * - `{kind: "open", path}` — `open: /path?query` navigates to the path on the appUrl origin
 *   (through the address bar: Ctrl+L, type the URL, Enter).
 * - `{kind: "click", x, y, button}` — `click: {x, y, button?: left|right|middle}`.
 * - `{kind: "type", text}` — `type: <text>`: insert text into the focused editable element.
 * - `{kind: "press", keys}` — `press: Enter` or `press: [ctrl, a]`: one key chord from the closed
 *   key-name list ({@link BROWSER_KEY_NAMES}).
 * - `{kind: "scroll", x?, y?, scrollX, scrollY}` — `scroll: {x?, y?, scrollX?, scrollY?}`: wheel
 *   at (x, y) (absent = frame centre) by scrollX/scrollY pixels (positive = right/down);
 *   at most {@link SCROLL_MAX_STEPS} wheel steps of {@link SCROLL_PIXELS_PER_STEP} px.
 * - `{kind: "wait", ms}` — `wait: {ms}`: 0–30000 ms.
 * - `{kind: "waitForText", text, timeoutMs}` — `waitForText: <text>`: observe until the page
 *   text contains `text`; fails the participant (`step_failed`) after
 *   {@link WAIT_FOR_TEXT_DEFAULT_TIMEOUT_MS}.
 * - `{kind: "screenshot", label?}` — `screenshot` or `screenshot: <label>`: an observation kept
 *   as evidence.
 * A failed step ends the scripted participant with `step_failed` (a finding); tasks are still checked.
 */
export type BrowserStep =
  | { kind: "open"; path: string }
  | { kind: "click"; x: number; y: number; button: "left" | "right" | "middle" }
  | { kind: "type"; text: string }
  | { kind: "press"; keys: string[] }
  | { kind: "scroll"; x?: number; y?: number; scrollX: number; scrollY: number }
  | { kind: "wait"; ms: number }
  | { kind: "waitForText"; text: string; timeoutMs: number }
  | { kind: "screenshot"; label?: string };

/** Step verbs, for "did you mean" on unknown step kinds. */
export const BROWSER_STEP_KINDS = ["open", "click", "type", "press", "scroll", "wait", "waitForText", "screenshot"] as const;

const coordinate = z.number().finite().min(0).max(1_000_000);
const delta = z.number().finite().min(-1_000_000).max(1_000_000);

const stepBodies = {
  open: z.string().regex(/^\/(?!\/)[^\s]*$/, { message: "must be a path on the app origin starting with a single `/` (no spaces)" }),
  click: strictObject({ x: coordinate, y: coordinate, button: z.enum(["left", "right", "middle"]).default("left") }),
  type: z.string().min(1, { message: "must be non-empty text" })
    .refine((s) => !s.includes("\u0000"), { message: "must not contain NUL" })
    .refine((s) => new TextEncoder().encode(s).byteLength <= TYPE_MAX_BYTES, { message: `must be at most ${TYPE_MAX_BYTES} UTF-8 bytes` }),
  press: z.union([nonBlank(), z.array(nonBlank()).min(1).max(16)]).transform((v, ctx) => {
    const keys = toList(v);
    for (const k of keys) {
      if (k.length > 64 || !isBrowserKeyName(k)) ctx.addIssue({ code: "custom", message: `key \`${k}\` is not in the closed key-name list (e.g. Enter, Tab, Escape, ctrl, shift, a–z, 0–9, F1–F12, ArrowUp)` });
    }
    const upper = keys.map((k) => k.toUpperCase());
    if (new Set(upper).size !== upper.length) ctx.addIssue({ code: "custom", message: "repeats a key in one chord" });
    return keys;
  }),
  scroll: strictObject({ x: coordinate.optional(), y: coordinate.optional(), scrollX: delta.default(0), scrollY: delta.default(0) }).superRefine((s, ctx) => {
    const steps = Math.ceil(Math.abs(s.scrollX) / SCROLL_PIXELS_PER_STEP) + Math.ceil(Math.abs(s.scrollY) / SCROLL_PIXELS_PER_STEP);
    if (steps === 0) ctx.addIssue({ code: "custom", message: "needs a non-zero scrollX or scrollY" });
    if (steps > SCROLL_MAX_STEPS) ctx.addIssue({ code: "custom", message: `is ${steps} wheel steps; at most ${SCROLL_MAX_STEPS} (${SCROLL_MAX_STEPS * SCROLL_PIXELS_PER_STEP} px) per scroll` });
    if ((s.x === undefined) !== (s.y === undefined)) ctx.addIssue({ code: "custom", message: "needs both x and y, or neither (frame centre)" });
  }),
  wait: strictObject({ ms: z.number().finite().min(0).max(WAIT_MAX_MS) }),
  waitForText: nonBlank(),
  screenshot: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, { message: "label must be 1–40 of [a-z0-9-], starting alphanumeric" }),
} as const;

/** The zod schema of each step body, keyed by verb (used to report precise step errors). */
export const BROWSER_STEP_BODIES = stepBodies;

const browserTasks = z.array(BrowserTaskSchema).min(1, { message: "must list at least one task when present" }).optional();
const browserCount = z.union([z.literal(1), z.literal(2)], { message: "must be 1 (desktop) or 2 (desktop + mobile)" }).default(1);

/** `scripted-browser`: a participant with no model driving the same executor an LLM would. */
export const ScriptedBrowserActorSchema = strictObject({
  type: z.literal("scripted-browser"),
  /** Surfaces: 1 = desktop, 2 = desktop + mobile (the same steps run on each). */
  count: browserCount,
  persona: nonBlank().optional(),
  mission: nonBlank().optional(),
  tasks: browserTasks,
  /** Parsed by `parseLab` into {@link BrowserStep}s (see there for the YAML forms). */
  steps: z.array(z.unknown()).min(1, { message: "must list at least one step" }),
}, { model: NO_MODEL, reasoningEffort: NO_MODEL });

/** `openai-computer-use`: an OpenAI computer-use model driving the desktop. */
export const ComputerUseActorSchema = strictObject({
  type: z.literal("openai-computer-use"),
  count: browserCount,
  persona: nonBlank().optional(),
  mission: nonBlank().optional(),
  model: nonBlank().optional(),
  reasoningEffort: reasoningEffort.optional(),
  tasks: browserTasks,
}, { steps: "only acts on a scripted-browser participant (a computer-use model decides its own actions)" });

/** The browser actor union, keyed by `type`. */
export const BrowserActorSchema = z.discriminatedUnion("type", [ScriptedBrowserActorSchema, ComputerUseActorSchema]);

/**
 * `subject.serve`: how the host serves the app at `appUrl` for a local browser study. Exactly
 * one of:
 * - `static: {root}` — humanish serves the directory `root` (relative to the project directory,
 *   `--cwd`; no absolute paths, no `..`) over HTTP on 127.0.0.1 at appUrl's port; `/` maps to
 *   `root/index.html`.
 * - `command: <shell command>` — started on the host in the project directory with env `PORT`
 *   (appUrl's port); it must listen on 127.0.0.1:PORT. humanish waits until a GET of appUrl
 *   answers (any status below 500) within `readyTimeoutMs` (default 30000) and stops the
 *   process group when the study ends.
 * Absent: the app must already be listening at appUrl (checked at preflight).
 */
export const ServeSchema = strictObject({
  static: strictObject({
    root: z.string().refine(isContainedRelativePath, { message: "must be a relative directory inside the project (no absolute path, no `..`)" }),
  }).optional(),
  command: nonBlank("a non-empty shell command").optional(),
  readyTimeoutMs: posInt.max(600_000).optional(),
}, { start: "is the reference's clone/local-tree key; use `command`", url: "is taken from subject.appUrl", install: REFERENCE_ONLY, build: REFERENCE_ONLY })
  .superRefine((s, ctx) => {
    if ((s.static === undefined) === (s.command === undefined)) ctx.addIssue({ code: "custom", message: "needs exactly one of `static: {root}` or `command`" });
    if (s.static !== undefined && s.readyTimeoutMs !== undefined) ctx.addIssue({ code: "custom", path: ["readyTimeoutMs"], message: "only acts with `command` (a static root is ready at once)" });
  });

/** `subject` on the browser route. `appUrl` is loopback-only (`http://127.0.0.1:<port>/…` or `http://localhost:<port>/…`). */
export const BrowserSubjectSchema = strictObject({
  source: z.literal("app-url"),
  appUrl: z.string().superRefine((u, ctx) => {
    const why = loopbackUrlProblem(u);
    if (why) ctx.addIssue({ code: "custom", message: why });
  }),
  serve: ServeSchema.optional(),
}, {
  product: NOT_ON_BROWSER,
  topology: REFERENCE_ONLY, exposure: REFERENCE_ONLY, publicTarget: REFERENCE_ONLY, repos: REFERENCE_ONLY,
  clone: REFERENCE_ONLY, localTree: REFERENCE_ONLY, env: REFERENCE_ONLY, envValues: REFERENCE_ONLY, state: REFERENCE_ONLY,
});

/**
 * `execution` on the browser route.
 * - `target`: `local` (default; a Docker guest desktop on this machine) or `e2b-desktop`
 *   (computer-use only; parses and routes, live runs come later).
 * - `timeoutMs`: wall-clock budget of each participant session, in ms (absent →
 *   `scenario.caps.maxMinutes`, else the route's default).
 */
export const BrowserExecutionSchema = strictObject({
  target: z.enum(["local", "e2b-desktop"]).default("local"),
  timeoutMs: posInt.optional(),
}, {
  terminal: NOT_ON_BROWSER, runtimeAuth: NOT_ON_BROWSER, runtime: NOT_ON_BROWSER, image: NOT_ON_BROWSER, network: NOT_ON_BROWSER,
  desktop: REFERENCE_ONLY + " (the device follows actors[0].count)",
  completionTimeoutMs: REFERENCE_ONLY, concurrency: REFERENCE_ONLY, caps: "moved: caps live in scenario.caps",
});

/** A whole browser lab as parsed (steps still raw; `parseLab` normalises them). */
export const BrowserLabSchema = strictObject({
  schema: z.literal(LAB_SCHEMA_ID, { message: `must be exactly ${LAB_SCHEMA_ID}` }),
  id: labId,
  title: nonBlank().optional(),
  description: nonBlank().optional(),
  subject: BrowserSubjectSchema,
  actors: z.array(BrowserActorSchema),
  execution: BrowserExecutionSchema.default({ target: "local" }),
  scenario: ScenarioSchema.default({ mode: "dry-run" }),
  policies: PoliciesSchema.default({ allowPrivateRepoAccess: false, allowProviderCredentials: false, allowPaymentCredentials: false, allowGitHubMutation: false }),
}, topForeign);

// ---------------------------------------------------------------------------------------------
// Types

/** A terminal task (hidden check normalised: `expectExit` filled, default 0). */
export type TerminalTask = z.output<typeof TerminalTaskSchema>;
/** A browser task (check conditions normalised to lists). */
export type BrowserTask = z.output<typeof BrowserTaskSchema>;
/** Any task: `{id, goal, check}`; the check shape depends on the route. */
export type LabTask = TerminalTask | BrowserTask;
/** A scripted-terminal step. */
export type TerminalStep = z.output<typeof TerminalStepSchema>;

export type ScriptedTerminalActor = z.output<typeof ScriptedTerminalActorSchema>;
export type CodexExecActor = z.output<typeof CodexExecActorSchema>;
export type TerminalActor = ScriptedTerminalActor | CodexExecActor;
/** scripted-browser actor with steps normalised to {@link BrowserStep}. */
export type ScriptedBrowserActor = Omit<z.output<typeof ScriptedBrowserActorSchema>, "steps"> & { steps: BrowserStep[] };
export type ComputerUseActor = z.output<typeof ComputerUseActorSchema>;
export type BrowserActor = ScriptedBrowserActor | ComputerUseActor;

/** `execution` of a terminal lab after normalisation: `network` always set. */
export type TerminalExecution = z.output<typeof TerminalExecutionSchema> & { network: "none" | "bridge" };
export type BrowserExecution = z.output<typeof BrowserExecutionSchema>;
export type Scenario = z.output<typeof ScenarioSchema>;
export type Caps = z.output<typeof CapsSchema>;
export type Policies = z.output<typeof PoliciesSchema>;
export type Product = z.output<typeof ProductSchema>;
export type Serve = z.output<typeof ServeSchema>;

/** A validated, normalised terminal lab (route `terminal`). */
export type TerminalLabConfig = Omit<z.output<typeof TerminalLabSchema>, "execution" | "actors"> & {
  execution: TerminalExecution;
  /** Exactly one actor. */
  actors: [TerminalActor];
};

/** A validated, normalised browser lab (route `browser`). */
export type BrowserLabConfig = Omit<z.output<typeof BrowserLabSchema>, "actors"> & {
  /** Exactly one actor. */
  actors: [BrowserActor];
};

/** A validated, normalised lab. Narrow with `selectLabBackend` or `subject.source`. */
export type LabConfig = TerminalLabConfig | BrowserLabConfig;

/**
 * A non-fatal finding about a lab: an accepted field that is not consumed on this route, or a
 * declaration with no mechanism behind it. `path` is the field path (`execution.timeoutMs`).
 */
export interface LabWarning {
  /** `HUMANISH_LAB_FIELD_INERT` | `HUMANISH_LAB_POLICY_DECLARATION_ONLY` | `HUMANISH_LAB_TARGET_DRY_RUN_ONLY` | `HUMANISH_LAB_ID_MISMATCH`. */
  code: string;
  message: string;
  path: string;
}

/** Zod schema of {@link LabWarning} (for result envelopes and bundles). */
export const LabWarningSchema = z.strictObject({ code: z.string(), message: z.string(), path: z.string() });

// ---------------------------------------------------------------------------------------------
// Helpers

function toList(v: string | string[]): string[] {
  return typeof v === "string" ? [v] : v;
}

function isHttpUrl(s: string): boolean {
  if (!/^https?:\/\//i.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** True for a non-empty relative path with no `..` segment, no backslash and no NUL. */
export function isContainedRelativePath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.includes("\u0000") || p.includes("\\")) return false;
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return false;
  return !p.split("/").some((seg) => seg === "..");
}

/**
 * Why `u` is not an acceptable loopback appUrl, or undefined when it is. Accepted exactly:
 * `http://127.0.0.1:<port><path>` or `http://localhost:<port><path>` with an explicit port
 * 1–65535, no user info, no fragment. Other spellings of loopback (`127.1`, `0x7f000001`,
 * `[::1]`, upper case) are refused so the written URL is the one the guest opens.
 */
export function loopbackUrlProblem(u: string): string | undefined {
  const m = /^http:\/\/(127\.0\.0\.1|localhost):(\d{1,5})(\/[^\s#]*)?$/.exec(u);
  if (!m) {
    if (/^https?:\/\//i.test(u) && !/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(u)) {
      return "must be a loopback URL (http://127.0.0.1:<port>/… or http://localhost:<port>/…); other hosts are refused";
    }
    return "must be http://127.0.0.1:<port>/… or http://localhost:<port>/… with an explicit port, no user info, spaces or fragment";
  }
  const port = Number(m[2]);
  if (!(port >= 1 && port <= 65535) || m[2]!.startsWith("0")) return `has port ${m[2]}; use 1–65535`;
  try {
    const parsed = new URL(u);
    if (parsed.hostname !== m[1] || parsed.port !== m[2]) return "does not parse to the same host and port";
  } catch {
    return "is not a valid URL";
  }
  return undefined;
}
