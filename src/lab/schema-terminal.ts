/**
 * The terminal route's lab schema:
 * `subject.source: terminal-product`, actors `scripted-terminal` | `codex-exec`,
 * `execution.target: docker` (default) | `e2b-terminal`.
 */
import { z } from "zod";
import {
  actorSeatFields,
  concurrencyField,
  exitCode,
  isHttpUrl,
  LAB_ID_PATTERN,
  labHeadFields,
  labTailFields,
  modelActorFields,
  NO_MODEL,
  NOT_ON_TERMINAL,
  posInt,
  REFERENCE_ONLY,
  seatCount,
  subjectReferenceOnly,
  targetString,
  taskId,
  topForeign,
} from "./schema-common.ts";
import { nonBlank, strictObject } from "./strict.ts";

/**
 * Working directory of a terminal study inside the sandbox. `product.install` commands,
 * scripted steps, the Codex participant and the hidden task checks all run with this cwd;
 * it exists (mode 0777) before the first install command runs.
 */
export const TERMINAL_STUDY_DIR = "/home/user/study";

/** Exact semver (no ranges, no `v` prefix, no `latest`). */
export const EXACT_SEMVER_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
/** Docker image references we accept in `execution.image` (name[:tag][@digest], lower-case path). */
export const IMAGE_REF_PATTERN =
  /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

/**
 * A terminal task's hidden check: a shell command run (via `bash -lc`) in the sandbox, in
 * {@link TERMINAL_STUDY_DIR}, after the participant ends. Passes when it exits `expectExit`
 * (default 0). Never shown to the participant.
 */
export const TerminalCheckSchema = strictObject(
  {
    run: nonBlank("a non-empty shell command"),
    expectExit: exitCode.default(0),
  },
  {
    textIncludes: NOT_ON_TERMINAL,
    textExcludes: NOT_ON_TERMINAL,
    urlIncludes: NOT_ON_TERMINAL,
    urlPathEquals: NOT_ON_TERMINAL,
  },
);

/** One task: the `goal` goes into the brief; `check` never does (it is hidden from the participant). */
export const TerminalTaskSchema = strictObject(
  {
    id: taskId,
    goal: nonBlank(),
    check: TerminalCheckSchema,
  },
  { success: "is the reference's browser success rule; a terminal task uses `check: {run, expectExit}`" },
);

/**
 * One scripted-terminal step: `run` is a shell command (`bash -lc`) run as the participant in
 * {@link TERMINAL_STUDY_DIR}. `expectExit` (default 0) is the exit code the author expects; on a
 * mismatch the scripted participant stops (completion reason `step_failed`, a finding about the
 * product) and the remaining steps do not run; hidden checks still run.
 */
export const TerminalStepSchema = strictObject({
  run: nonBlank("a non-empty shell command"),
  expectExit: exitCode.default(0),
});

const terminalTasks = z.array(TerminalTaskSchema).min(1, { message: "must list at least one task when present" }).optional();

/** `scripted-terminal`: a participant with no model that runs `steps[]` one at a time. */
export const ScriptedTerminalActorSchema = strictObject(
  {
    type: z.literal("scripted-terminal"),
    /** Seats running the same steps, each in its own sandbox. */
    count: seatCount.optional(),
    ...actorSeatFields,
    persona: nonBlank().optional(),
    mission: nonBlank().optional(),
    tasks: terminalTasks,
    steps: z.array(TerminalStepSchema).min(1, { message: "must list at least one step" }),
  },
  { model: NO_MODEL, reasoningEffort: NO_MODEL },
);

/**
 * `codex-exec`: the OpenAI Codex CLI run with `codex exec --json` inside the sandbox. `mission`
 * is recorded in plaintext (public-safe author text); `model` is passed as `--model`.
 */
export const CodexExecActorSchema = strictObject(
  {
    type: z.literal("codex-exec"),
    count: seatCount.optional(),
    ...actorSeatFields,
    ...modelActorFields,
    tasks: terminalTasks,
  },
  { steps: "only acts on a scripted-terminal participant (codex-exec decides its own commands)" },
);

/** The terminal actor union, keyed by `type`. */
export const TerminalActorSchema = z.discriminatedUnion("type", [ScriptedTerminalActorSchema, CodexExecActorSchema]);

/**
 * `subject.product`. `install` is a list of shell commands run as root
 * in the sandbox, in order, in {@link TERMINAL_STUDY_DIR}, before the participant starts and
 * with no key in their env (unkeyed); a failing command fails the run before the participant.
 */
export const ProductSchema = strictObject(
  {
    name: z.string().regex(LAB_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_`, `.` and `-`" }),
    publicSurfaces: z
      .array(targetString().refine(isHttpUrl, { message: "must be an absolute http(s) URL" }))
      .min(1, { message: "must list at least one public surface URL" }),
    install: z.array(nonBlank("a non-empty shell command")).min(1, { message: "must list at least one command when present" }).optional(),
  },
  {
    workdir: `is a desktop-cli key; terminal studies always run in ${TERMINAL_STUDY_DIR}`,
    upload: REFERENCE_ONLY,
  },
);

/** `subject` on the terminal route. */
export const TerminalSubjectSchema = strictObject(
  {
    source: z.literal("terminal-product"),
    product: ProductSchema,
  },
  {
    appUrl: NOT_ON_TERMINAL,
    serve: NOT_ON_TERMINAL,
    ...subjectReferenceOnly,
  },
);

/**
 * `execution` on the terminal route.
 * - `target`: `docker` (default; a local Docker sandbox) or `e2b-terminal` (an E2B sandbox per
 *   seat; needs `E2B_API_KEY`).
 * - `egressAllow` (e2b-terminal only): the hosts the sandbox may reach; every other address is
 *   denied (a Codex seat's model host is added). Absent: unrestricted when the seat needs the
 *   network (Codex, `product.install`), none otherwise.
 * - `template` (e2b-terminal only): the E2B template (default `base`).
 * - `timeoutMs`: accepted for compatibility but not consumed here (warns); the participant's
 *   deadline is `scenario.caps.maxMinutes`.
 * - `terminal`: `{transport: exec-stream, stdin: disabled}` — captured exec output, stdin closed.
 * - `runtimeAuth` (codex-exec only; default `openai-env`): the model is reached through the
 *   humanish model gateway either way. `openai-env`: the key also rides in the Codex command's
 *   env (the agent holds a spendable key). `openai-egress`: on docker the key stays on the
 *   host, in the gateway, and the sandbox holds only a per-seat gateway token; on e2b-terminal
 *   the key lives only in the sandbox's E2B egress rule for api.openai.com (any sandbox process
 *   can still spend through it).
 * - `runtime.version`: exact `@openai/codex` version (codex-exec only); absent → `latest` is
 *   resolved once and the exact version recorded.
 * - `image`: Docker image for the sandbox (target docker only); absent → the humanish sandbox image.
 * - `network`: `none` | `bridge` (target docker only). `bridge` attaches the sandbox to Docker's
 *   default bridge. A participant that calls a model (codex-exec) keeps it for the whole study;
 *   for any other participant it is taken away after `product.install`, before the participant
 *   starts (src/routes/terminal). It is only accepted when something in the lab needs it:
 *   `product.install` commands (package downloads) or a `codex-exec` participant (which must
 *   install the Codex CLI and reach the model API). Default: `bridge` for codex-exec, else `none`.
 * - `limits.diskMiB`: most MiB the sandbox may write (target docker; default 2048): no file may
 *   grow past it, and a sandbox whose writes add up past it is stopped with the reason recorded.
 */
export const TerminalExecutionSchema = strictObject(
  {
    target: z.enum(["docker", "e2b-terminal"]).default("docker"),
    timeoutMs: posInt.optional(),
    terminal: strictObject({
      transport: z.literal("exec-stream", { message: "must be exec-stream (captured exec output is not an interactive PTY)" }).default("exec-stream"),
      stdin: z.literal("disabled", { message: "must be disabled (participants run with stdin closed)" }).default("disabled"),
    }).default(() => ({ transport: "exec-stream", stdin: "disabled" }) as const),
    runtimeAuth: z.enum(["openai-env", "openai-egress"], { message: "must be openai-env or openai-egress" }).optional(),
    runtime: strictObject({
      version: z.string().regex(EXACT_SEMVER_PATTERN, { message: "must be an exact semver such as 0.171.0 (no ranges, no `latest`, no `v`)" }),
    }).optional(),
    image: z.string().regex(IMAGE_REF_PATTERN, { message: "must be a Docker image reference such as humanish-sandbox:1 or debian:bookworm-slim" }).optional(),
    network: z.enum(["none", "bridge"]).optional(),
    limits: strictObject({ diskMiB: posInt.optional() }).optional(),
    concurrency: concurrencyField.optional(),
    egressAllow: z
      .array(
        z.string().regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, {
          message: "must be a lowercase host name such as registry.npmjs.org",
        }),
      )
      .min(1, { message: "must list at least one host (omit it for unrestricted egress)" })
      .optional(),
    template: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, { message: "must be an E2B template id or name such as base" })
      .optional(),
  },
  {
    desktop: NOT_ON_TERMINAL,
    completionTimeoutMs: REFERENCE_ONLY,
    caps: "belongs in scenario.caps",
  },
);

/** A whole terminal lab as parsed (before route-level normalisation). */
export const TerminalLabSchema = strictObject(
  {
    ...labHeadFields,
    subject: TerminalSubjectSchema,
    actors: z.array(TerminalActorSchema),
    execution: TerminalExecutionSchema.default(() => ({ target: "docker", terminal: { transport: "exec-stream", stdin: "disabled" } }) as const),
    ...labTailFields,
  },
  topForeign,
);

/** A terminal task (hidden check normalised: `expectExit` filled, default 0). */
export type TerminalTask = z.output<typeof TerminalTaskSchema>;
/** A scripted-terminal step. */
export type TerminalStep = z.output<typeof TerminalStepSchema>;
/** The `scripted-terminal` actor. */
export type ScriptedTerminalActor = z.output<typeof ScriptedTerminalActorSchema>;
/** The `codex-exec` actor. */
export type CodexExecActor = z.output<typeof CodexExecActorSchema>;
/** Either terminal actor. */
export type TerminalActor = ScriptedTerminalActor | CodexExecActor;
/** `subject.product`. */
export type Product = z.output<typeof ProductSchema>;
/** `execution` of a terminal lab after normalisation: `network` always set. */
export type TerminalExecution = z.output<typeof TerminalExecutionSchema> & { network: "none" | "bridge" };

/** A validated, normalised terminal lab (route `terminal`). */
export type TerminalLabConfig = Omit<z.output<typeof TerminalLabSchema>, "execution" | "actors"> & {
  execution: TerminalExecution;
  /** Exactly one actor. */
  actors: [TerminalActor];
};
