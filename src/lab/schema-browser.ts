/**
 * The browser route's lab schema: `subject.source: app-url` (a loopback URL; a public https URL on e2b-desktop), actors
 * `scripted-browser` | `openai-computer-use` | `local-agent` | `vision-agent`, `execution.target: local` (default) |
 * `e2b-desktop`.
 */
import { z } from "zod";
import { EMBEDDED_APP_NAMES, EMBEDDED_ROOT_PREFIX, embeddedRootName, isEmbeddedAppName } from "./embedded-apps.ts";
import {
  actorSeatFields,
  concurrencyField,
  isContainedRelativePath,
  labHeadFields,
  labTailFields,
  loopbackUrlProblem,
  modelActorFields,
  NO_MODEL,
  NOT_ON_BROWSER,
  posInt,
  publicHttpsUrlProblem,
  REFERENCE_ONLY,
  seatCount,
  subjectReferenceOnly,
  targetString,
  taskId,
  toList,
  topForeign,
} from "./schema-common.ts";
import { nonBlank, strictObject } from "./strict.ts";

/** Screen geometry of a participant's desktop, in CSS pixels, and its device pixel ratio. */
export interface DevicePreset {
  width: number;
  height: number;
  deviceScaleFactor: number;
}

/** Device presets (the upstream contract's geometry). `desktop` is the default. */
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
 * Key names a `press` step may use (the browser-control key list, matched case-insensitively):
 * single `[a-z0-9]`, `F1`–`F12`, modifiers, navigation keys and the named punctuation.
 */
export const BROWSER_KEY_NAMES: readonly string[] = [
  "CTRL",
  "CONTROL",
  "ALT",
  "SHIFT",
  "META",
  "SUPER",
  "CMD",
  "ENTER",
  "RETURN",
  "TAB",
  "ESC",
  "ESCAPE",
  "SPACE",
  " ",
  "BACKSPACE",
  "DELETE",
  "INSERT",
  "HOME",
  "END",
  "PAGEUP",
  "PAGEDOWN",
  "ARROWUP",
  "UP",
  "ARROWDOWN",
  "DOWN",
  "ARROWLEFT",
  "LEFT",
  "ARROWRIGHT",
  "RIGHT",
  "+",
  "-",
  "=",
  ",",
  ".",
  "/",
  "\\",
  ";",
  "'",
  "[",
  "]",
  "`",
  ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
];

/** True when `name` is in the closed key-name list (case-insensitive). */
export function isBrowserKeyName(name: string): boolean {
  if (/^[a-z0-9]$/i.test(name)) return true;
  return BROWSER_KEY_NAMES.includes(name.toUpperCase());
}

/** Default deadline of a `waitForText` step, in ms. */
export const WAIT_FOR_TEXT_DEFAULT_TIMEOUT_MS = 10_000;
/** Bounds of a `wait` step, in ms (the browser-control wait bound). */
export const WAIT_MAX_MS = 30_000;
/** Pixels per wheel step and the wheel-step cap of one `scroll` (the browser-control scroll rule). */
export const SCROLL_PIXELS_PER_STEP = 120;
export const SCROLL_MAX_STEPS = 100;
/** Longest `type` text, in UTF-8 bytes (the browser-control text bound). */
export const TYPE_MAX_BYTES = 65_536;

/** Strings looked for in the page's visible text: one, or a non-empty list (each non-blank). */
const pageTexts = () => z.union([nonBlank(), z.array(nonBlank()).min(1)]).optional();

/** The URL conditions a hidden check and a `stopWhen` rule share: a substring, or the exact path. */
const UrlConditions = {
  urlIncludes: targetString()
    .refine((u) => u.trim().length > 0, { message: "must be a non-empty string" })
    .optional(),
  urlPathEquals: targetString()
    .regex(/^\/(?!\/)/, { message: "must be a path starting with a single `/`" })
    .optional(),
};

/**
 * A browser task's hidden check (the upstream stop-when rule, plus our `textExcludes`).
 * Evaluated after the participant ends, over every observation recorded during the session
 * (the final one included): the task passes when ONE observation satisfies ALL present
 * conditions. `text` is the page's visible text (`document.body.innerText`), `url` its URL.
 * - `textIncludes`: each string appears in the text (a string or a list of strings).
 * - `textExcludes`: no string appears in the text.
 * - `urlIncludes`: substring of the URL. `urlPathEquals`: exact URL path (starts with one `/`).
 */
export const BrowserCheckSchema = strictObject(
  {
    textIncludes: pageTexts(),
    textExcludes: pageTexts(),
    ...UrlConditions,
  },
  {
    run: NOT_ON_BROWSER,
    expectExit: NOT_ON_BROWSER,
    appStatePathEquals: REFERENCE_ONLY,
  },
)
  .superRefine((c, ctx) => {
    if (c.textIncludes === undefined && c.textExcludes === undefined && c.urlIncludes === undefined && c.urlPathEquals === undefined) {
      ctx.addIssue({ code: "custom", message: "needs at least one condition: textIncludes, textExcludes, urlIncludes or urlPathEquals" });
    }
  })
  .transform((c) => ({
    ...(c.textIncludes !== undefined ? { textIncludes: toList(c.textIncludes) } : {}),
    ...(c.textExcludes !== undefined ? { textExcludes: toList(c.textExcludes) } : {}),
    ...(c.urlIncludes !== undefined ? { urlIncludes: c.urlIncludes } : {}),
    ...(c.urlPathEquals !== undefined ? { urlPathEquals: c.urlPathEquals } : {}),
  }));

/** A browser task: goal for the brief, hidden observation check. */
export const BrowserTaskSchema = strictObject(
  {
    id: taskId,
    goal: nonBlank(),
    check: BrowserCheckSchema,
  },
  { success: "is the reference's name; humanish uses `check`" },
);

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
  open: targetString().regex(/^\/(?!\/)[^\s]*$/, { message: "must be a path on the app origin starting with a single `/` (no spaces)" }),
  click: strictObject({ x: coordinate, y: coordinate, button: z.enum(["left", "right", "middle"]).default("left") }),
  type: z
    .string()
    .min(1, { message: "must be non-empty text" })
    .refine((s) => !s.includes("\u0000"), { message: "must not contain NUL" })
    .refine((s) => new TextEncoder().encode(s).byteLength <= TYPE_MAX_BYTES, { message: `must be at most ${TYPE_MAX_BYTES} UTF-8 bytes` }),
  press: z.union([nonBlank(), z.array(nonBlank()).min(1).max(16)]).transform((v, ctx) => {
    const keys = toList(v);
    for (const k of keys) {
      if (k.length > 64 || !isBrowserKeyName(k))
        ctx.addIssue({
          code: "custom",
          message: `key \`${k}\` is not in the closed key-name list (e.g. Enter, Tab, Escape, ctrl, shift, a–z, 0–9, F1–F12, ArrowUp)`,
        });
    }
    const upper = keys.map((k) => k.toUpperCase());
    if (new Set(upper).size !== upper.length) ctx.addIssue({ code: "custom", message: "repeats a key in one chord" });
    return keys;
  }),
  scroll: strictObject({ x: coordinate.optional(), y: coordinate.optional(), scrollX: delta.default(0), scrollY: delta.default(0) }).superRefine((s, ctx) => {
    const steps = Math.ceil(Math.abs(s.scrollX) / SCROLL_PIXELS_PER_STEP) + Math.ceil(Math.abs(s.scrollY) / SCROLL_PIXELS_PER_STEP);
    if (steps === 0) ctx.addIssue({ code: "custom", message: "needs a non-zero scrollX or scrollY" });
    if (steps > SCROLL_MAX_STEPS)
      ctx.addIssue({
        code: "custom",
        message: `is ${steps} wheel steps; at most ${SCROLL_MAX_STEPS} (${SCROLL_MAX_STEPS * SCROLL_PIXELS_PER_STEP} px) per scroll`,
      });
    if ((s.x === undefined) !== (s.y === undefined)) ctx.addIssue({ code: "custom", message: "needs both x and y, or neither (frame centre)" });
  }),
  wait: strictObject({ ms: z.number().finite().min(0).max(WAIT_MAX_MS) }),
  waitForText: nonBlank(),
  screenshot: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, { message: "label must be 1–40 of [a-z0-9-], starting alphanumeric" }),
} as const;

/** The zod schema of each step body, keyed by verb (used to report precise step errors). */
export const BROWSER_STEP_BODIES = stepBodies;

const browserTasks = z.array(BrowserTaskSchema).min(1, { message: "must list at least one task when present" }).optional();
const browserCount = seatCount.default(1);

/** `scripted-browser`: a participant with no model driving the same executor an LLM would. */
export const ScriptedBrowserActorSchema = strictObject(
  {
    type: z.literal("scripted-browser"),
    /** Seats running the same steps (2 without `lanes` = desktop + mobile, for compatibility). */
    count: browserCount,
    ...actorSeatFields,
    persona: nonBlank().optional(),
    mission: nonBlank().optional(),
    tasks: browserTasks,
    /** Parsed by `parseLab` into {@link BrowserStep}s (see there for the YAML forms). */
    steps: z.array(z.unknown()).min(1, { message: "must list at least one step" }),
  },
  { model: NO_MODEL, reasoningEffort: NO_MODEL },
);

/**
 * One `stopWhen` rule: the seat stops (and is asked for its closing account) when ONE
 * observation of the app origin satisfies ALL present conditions. `textIncludes`: each string in
 * the page text; `urlIncludes`: substring of the URL; `urlPathEquals`: exact path.
 */
export const StopRuleSchema = strictObject(
  {
    id: taskId.optional(),
    textIncludes: pageTexts(),
    ...UrlConditions,
  },
  { appStatePathEquals: REFERENCE_ONLY },
)
  .superRefine((r, ctx) => {
    if (r.textIncludes === undefined && r.urlIncludes === undefined && r.urlPathEquals === undefined)
      ctx.addIssue({ code: "custom", message: "needs at least one condition: textIncludes, urlIncludes or urlPathEquals" });
  })
  .transform((r) => ({
    ...(r.id !== undefined ? { id: r.id } : {}),
    ...(r.textIncludes !== undefined ? { textIncludes: toList(r.textIncludes) } : {}),
    ...(r.urlIncludes !== undefined ? { urlIncludes: r.urlIncludes } : {}),
    ...(r.urlPathEquals !== undefined ? { urlPathEquals: r.urlPathEquals } : {}),
  }));

/** `stopWhen: {any: [rule, …]}`: a harness stop rule (never shown to the model). */
export const StopWhenSchema = strictObject({ any: z.array(StopRuleSchema).min(1, { message: "must list at least one rule" }) }, {});

/** `openai-computer-use`: an OpenAI computer-use model driving the desktop. */
export const ComputerUseActorSchema = strictObject(
  {
    type: z.literal("openai-computer-use"),
    count: browserCount,
    ...actorSeatFields,
    ...modelActorFields,
    tasks: browserTasks,
    /** Per-response output ceiling, tokens (also the worst case the spend cap admits). */
    maxOutputTokens: posInt.max(128_000).optional(),
    stopWhen: StopWhenSchema.optional(),
    /**
     * Safety-check codes the operator acknowledges in advance (echoed on the call's output and
     * recorded); any other pending check stops the seat as `blocked_approval`.
     */
    acknowledgeSafetyChecks: z
      .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, { message: "must be a safety-check code such as malicious_instructions" }))
      .optional(),
  },
  { steps: "only acts on a scripted-browser participant (a computer-use model decides its own actions)" },
);

/** Why a model knob cannot act on a `local-agent` seat (the account profile pins it). */
const PINNED_BY_PROFILE = "is pinned by the qualified Codex account profile of a local-agent seat";

/**
 * `local-agent` with `localAgent: codex`: the operator's signed-in Codex CLI (a ChatGPT login,
 * no API key) drives the desktop through one `humanish_ui` tool, in a restricted
 * `codex app-server` on the host. The model and effort are the profile's; billing is
 * `account-unknown`, so no output ceiling or USD cap can bound it (both are refused).
 */
export const LocalAgentActorSchema = strictObject(
  {
    type: z.literal("local-agent"),
    localAgent: z.enum(["codex"], { message: "must be codex (the one local agent humanish runs)" }),
    count: browserCount,
    ...actorSeatFields,
    persona: nonBlank().optional(),
    mission: nonBlank().optional(),
    tasks: browserTasks,
  },
  {
    model: PINNED_BY_PROFILE,
    reasoningEffort: PINNED_BY_PROFILE,
    maxOutputTokens: "is refused for a local-agent seat: its billing is account-unknown, so an output ceiling cannot bound its spend",
    stopWhen: "only acts on an openai-computer-use participant (a local-agent seat ends with its own final answer)",
    acknowledgeSafetyChecks: "only acts on an openai-computer-use participant",
    steps: "only acts on a scripted-browser participant (a local agent decides its own actions)",
  },
);

/**
 * `vision-agent`: any vision model on a Responses-compatible endpoint (`OPENAI_BASE_URL`) driving
 * the desktop through function calls of the `humanish_ui` tool, a screenshot each turn. The
 * computer-use keys, with `model` required (there is no default vision model).
 */
const { acknowledgeSafetyChecks: _noSafetyChecks, ...visionFields } = ComputerUseActorSchema.shape;
export const VisionAgentActorSchema = strictObject(
  {
    ...visionFields,
    type: z.literal("vision-agent"),
    model: nonBlank(),
  },
  {
    steps: "only acts on a scripted-browser participant (a vision model decides its own actions)",
    acknowledgeSafetyChecks: "only acts on an openai-computer-use participant (a function-calling model raises no safety checks)",
  },
);

/** The browser actor union, keyed by `type`. */
export const BrowserActorSchema = z.discriminatedUnion("type", [
  ScriptedBrowserActorSchema,
  ComputerUseActorSchema,
  LocalAgentActorSchema,
  VisionAgentActorSchema,
]);

/**
 * `subject.serve`: how the host serves the app at `appUrl` for a local browser study. Exactly
 * one of:
 * - `static: {root}` — humanish serves the directory `root` (relative to the project directory,
 *   `--cwd`; no absolute paths, no `..`) over HTTP on 127.0.0.1 at appUrl's port; `/` maps to
 *   `root/index.html`. `root: "embedded:<app>"` instead serves an app compiled into humanish
 *   (closed list {@link EMBEDDED_APP_NAMES}, e.g. `embedded:todomvc-vanillajs`), from memory;
 *   an unknown name is refused here.
 * - `command: <shell command>` — started on the host in the project directory with env `PORT`
 *   (appUrl's port); it must listen on 127.0.0.1:PORT. humanish waits until a GET of appUrl
 *   answers (any status below 500) within `readyTimeoutMs` (default 30000) and stops the
 *   process group when the study ends.
 * Absent: the app must already be listening at appUrl (checked at preflight).
 */
export const ServeSchema = strictObject(
  {
    static: strictObject({
      root: targetString().superRefine((root, ctx) => {
        const name = embeddedRootName(root);
        if (name !== undefined) {
          if (!isEmbeddedAppName(name)) {
            ctx.addIssue({
              code: "custom",
              message: `names no embedded app: \`${name}\` is unknown; embedded apps are ${EMBEDDED_APP_NAMES.map((n) => `\`${EMBEDDED_ROOT_PREFIX}${n}\``).join(", ")}`,
            });
          }
          return;
        }
        if (!isContainedRelativePath(root))
          ctx.addIssue({ code: "custom", message: "must be a relative directory inside the project (no absolute path, no `..`) or `embedded:<app>`" });
      }),
    }).optional(),
    command: nonBlank("a non-empty shell command").optional(),
    readyTimeoutMs: posInt.max(600_000).optional(),
  },
  { start: "is the reference's clone/local-tree key; use `command`", url: "is taken from subject.appUrl", install: REFERENCE_ONLY, build: REFERENCE_ONLY },
).superRefine((s, ctx) => {
  if ((s.static === undefined) === (s.command === undefined)) ctx.addIssue({ code: "custom", message: "needs exactly one of `static: {root}` or `command`" });
  if (s.static !== undefined && s.readyTimeoutMs !== undefined)
    ctx.addIssue({ code: "custom", path: ["readyTimeoutMs"], message: "only acts with `command` (a static root is ready at once)" });
});

/**
 * `subject` on the browser route. `appUrl` is a loopback URL (`http://127.0.0.1:<port>/…` or
 * `http://localhost:<port>/…`), or — for `execution.target: e2b-desktop` only — a public `https://` URL.
 */
export const BrowserSubjectSchema = strictObject(
  {
    source: z.literal("app-url"),
    appUrl: targetString().superRefine((u, ctx) => {
      // An https URL can only be meant for the E2B desktop (parse checks the target); anything
      // else must be a loopback URL of the machine (or desktop) that serves the app.
      const why = /^https:\/\//i.test(u) ? publicHttpsUrlProblem(u) : loopbackUrlProblem(u);
      if (why) ctx.addIssue({ code: "custom", message: why });
    }),
    serve: ServeSchema.optional(),
  },
  {
    product: NOT_ON_BROWSER,
    ...subjectReferenceOnly,
  },
);

/**
 * `execution` on the browser route.
 * - `target`: `local` (default; a Docker guest desktop on this machine) or `e2b-desktop`
 *   (the actors whose registry entry lists it: each seat gets an E2B desktop; the app is a public https URL or
 *   `subject.serve.static`, which the lab serves inside the desktop).
 * - `template`: the E2B desktop template (default `desktop`); only acts on `e2b-desktop`.
 * - `timeoutMs`: wall-clock budget of each participant session, in ms (absent →
 *   `scenario.caps.maxMinutes`, else the route's default).
 */
export const BrowserExecutionSchema = strictObject(
  {
    target: z.enum(["local", "e2b-desktop"]).default("local"),
    template: nonBlank().optional(),
    timeoutMs: posInt.optional(),
    concurrency: concurrencyField.optional(),
  },
  {
    terminal: NOT_ON_BROWSER,
    runtimeAuth: NOT_ON_BROWSER,
    runtime: NOT_ON_BROWSER,
    image: NOT_ON_BROWSER,
    network: NOT_ON_BROWSER,
    desktop: `${REFERENCE_ONLY} (the device follows actors[0].count)`,
    completionTimeoutMs: REFERENCE_ONLY,
    caps: "belongs in scenario.caps",
  },
);

/** A whole browser lab as parsed (steps still raw; `parseLab` normalises them). */
export const BrowserLabSchema = strictObject(
  {
    ...labHeadFields,
    subject: BrowserSubjectSchema,
    actors: z.array(BrowserActorSchema),
    execution: BrowserExecutionSchema.default(() => ({ target: "local" }) as const),
    ...labTailFields,
  },
  topForeign,
);

/** A browser task (check conditions normalised to lists). */
export type BrowserTask = z.output<typeof BrowserTaskSchema>;
/** scripted-browser actor with steps normalised to {@link BrowserStep}. */
export type ScriptedBrowserActor = Omit<z.output<typeof ScriptedBrowserActorSchema>, "steps"> & { steps: BrowserStep[] };
/** The `openai-computer-use` actor. */
export type ComputerUseActor = z.output<typeof ComputerUseActorSchema>;
/** The `local-agent` actor (`localAgent: codex`). */
export type LocalAgentActor = z.output<typeof LocalAgentActorSchema>;
/** The `vision-agent` actor. */
export type VisionAgentActor = z.output<typeof VisionAgentActorSchema>;
/** Any browser actor. */
export type BrowserActor = ScriptedBrowserActor | ComputerUseActor | LocalAgentActor | VisionAgentActor;
/** `execution` of a browser lab after defaults. */
export type BrowserExecution = z.output<typeof BrowserExecutionSchema>;
/** `subject.serve`. */
export type Serve = z.output<typeof ServeSchema>;

/** A validated, normalised browser lab (route `browser`). */
export type BrowserLabConfig = Omit<z.output<typeof BrowserLabSchema>, "actors"> & {
  /** Exactly one actor. */
  actors: [BrowserActor];
};
