/**
 * `humanish init`: writes
 * `humanish/labs/<id>.yaml` from the interactive wizard or, with `--yes`, from a template;
 * adds `.humanish/` to `.gitignore`; returns `humanish.init-result.v1` with the exact next command.
 *
 * Refusals, all before anything is written:
 * - `HUMANISH_CONFIRMATION_REQUIRED`: no `--yes` and stdin is not a terminal (or `--json`, which
 *   leaves no room for questions on stdout).
 * - `HUMANISH_INVALID_OPTION`: `--template` other than `terminal` | `browser`, or without `--yes`.
 * - `HUMANISH_UNSAFE_PROJECT_PATH`: an id that would escape `humanish/labs/`, a symlinked
 *   `humanish/`, `humanish/labs/`, lab file or `.gitignore`.
 * - `HUMANISH_LAB_EXISTS`: the lab file exists and `--force` was not given.
 * - `HUMANISH_LAB_INVALID`: the drafted lab fails `parseLab` (e.g. a bad `--id`).
 * - `HUMANISH_INIT_CANCELLED`: the person cancelled the wizard (nothing written).
 */
import type { Readable, Writable } from "node:stream";
import { HumanishError } from "../errors.ts";
import { checkDraft, INIT_TEMPLATES, type InitAnswers, type InitRoute, type InitTemplate, renderLabYaml, templateAnswers } from "./draft.ts";
import { commitGitignore, type GitignoreOutcome, labExists, labFileExists, labTarget, planGitignore, projectRoot, writeLabFile } from "./project.ts";
import { runWizard } from "./wizard.ts";

export type { InitAnswers, InitRoute, InitServe, InitTask, InitTemplate } from "./draft.ts";
export { buildLabDocument, checkDraft, parseBrowserStep, renderLabYaml, templateAnswers } from "./draft.ts";

/** Options of {@link runInit} (the CLI maps its flags onto these). */
export interface RunInitOptions {
  /** Project directory (`--cwd`), absolute or relative to the process cwd. */
  cwd: string;
  /** `--yes`: no questions, write the template. */
  yes: boolean;
  /** `--template terminal|browser|computer-use` (only with `--yes`; default `terminal`). */
  template?: string;
  /** `--id ID`: the lab id (pre-fills the wizard's answer). */
  id?: string;
  /** `--force`: replace an existing lab file. */
  force?: boolean;
  /** `--json`: the CLI prints the result document; the wizard cannot run. */
  json: boolean;
  /** Whether stdin is a terminal; default `process.stdin.isTTY`. */
  interactive?: boolean;
  /** Streams for the wizard (default process stdin/stdout). */
  stdin?: Readable;
  stdout?: Writable;
}

/** `humanish.init-result.v1`. */
export interface InitResult {
  schema: "humanish.init-result.v1";
  ok: true;
  /** The project directory as given (never persisted anywhere). */
  cwd: string;
  /** `wizard` or `template`. */
  via: "wizard" | "template";
  lab: { id: string; route: InitRoute; actor: string; mode: "dry-run" | "live"; path: string; replaced: boolean };
  /** What happened to `.gitignore`. */
  gitignore: GitignoreOutcome;
  /** Files written, project-relative. */
  written: string[];
  /** Lab warnings from `parseLab` (accepted but not consumed fields, declarations). */
  warnings: { code: string; message: string; path?: string }[];
  /** The exact next command. */
  next: string;
  /** Human-mode summary lines (non-enumerable: never part of the `--json` document). */
  human: string;
}

function resolveTemplate(t: string | undefined, yes: boolean): InitTemplate {
  if (t === undefined) return "terminal";
  if (!yes) {
    throw new HumanishError("HUMANISH_INVALID_OPTION", "--template only applies with --yes (the wizard asks what you are studying).", {
      next: `humanish init --yes --template ${t === "browser" ? "browser" : "terminal"}`,
    });
  }
  if (!(INIT_TEMPLATES as readonly string[]).includes(t)) {
    throw new HumanishError("HUMANISH_INVALID_OPTION", `--template must be ${INIT_TEMPLATES.join(", ")}, got ${JSON.stringify(t.slice(0, 60))}.`, {
      next: "humanish init --yes --template terminal",
    });
  }
  return t as InitTemplate;
}

/** The exact command that runs the new lab (a `--cwd` is added when the project is not `.`). */
function nextCommand(id: string, cwd: string): string {
  const base = `humanish lab run ${id}`;
  return cwd === "." || cwd === "" || cwd === process.cwd() ? base : `${base} --cwd ${/^[A-Za-z0-9_./-]+$/.test(cwd) ? cwd : JSON.stringify(cwd)}`;
}

/**
 * Runs `humanish init` (see module doc for refusals). Returns the result on success.
 * @throws HumanishError with one of the codes in the module doc.
 */
export async function runInit(opts: RunInitOptions): Promise<InitResult> {
  const template = resolveTemplate(opts.template, opts.yes);
  const interactive = opts.interactive ?? Boolean(process.stdin.isTTY);
  if (!opts.yes && (opts.json || !interactive)) {
    throw new HumanishError(
      "HUMANISH_CONFIRMATION_REQUIRED",
      opts.json ? "humanish init --json cannot ask questions; it needs --yes." : "humanish init asks questions, but stdin is not a terminal.",
      { next: "humanish init --yes [--template terminal|browser|computer-use] [--id ID]" },
    );
  }
  const root = projectRoot(opts.cwd);

  // Early refusals that need no answers: an unsafe --id or an existing lab.
  if (opts.id !== undefined) {
    const t = labTarget(root, opts.id, { create: false });
    if (labFileExists(t.abs, t.rel) && !opts.force) throw labExists(t.rel);
  }
  planGitignore(root);

  let answers: InitAnswers;
  if (opts.yes) {
    answers = templateAnswers(template, opts.id);
  } else {
    const got = await runWizard(
      { ...(opts.stdin ? { input: opts.stdin } : {}), ...(opts.stdout ? { output: opts.stdout } : {}) },
      { ...(opts.id !== undefined ? { id: opts.id } : {}) },
    );
    if (got === null) {
      throw new HumanishError("HUMANISH_INIT_CANCELLED", "humanish init was cancelled; nothing was written.", { next: "humanish init" });
    }
    answers = got;
  }

  const checked = checkDraft(answers);
  if (!checked.ok) {
    throw new HumanishError("HUMANISH_LAB_INVALID", `The drafted lab is invalid: ${checked.message}`, {
      next: "humanish init --yes --id <letters-digits-dashes>",
    });
  }

  // Plan everything, then write: the lab first (it can be refused), then .gitignore.
  const target = labTarget(root, answers.id, { create: false });
  const existed = labFileExists(target.abs, target.rel);
  if (existed && !opts.force) throw labExists(target.rel);
  const gitignore = planGitignore(root);
  const created = labTarget(root, answers.id, { create: true });
  writeLabFile(created.abs, created.rel, renderLabYaml(answers), Boolean(opts.force));
  commitGitignore(gitignore);

  const written = [created.rel, ...(gitignore.outcome === "present" ? [] : [".gitignore"])];
  const next = nextCommand(answers.id, opts.cwd);
  const human = [
    `${existed ? "replaced" : "wrote"} ${created.rel} (${answers.route} study, ${answers.actorType}, ${answers.mode})`,
    gitignore.outcome === "present"
      ? ".gitignore already ignores .humanish/"
      : `.gitignore: ${gitignore.outcome === "created" ? "created with" : "added"} .humanish/`,
    ...checked.warnings.map((w) => `warning ${w.code}: ${w.message}`),
    `next: ${next}`,
    // A model participant needs a key for a live run; say how, and where the key stays.
    ...(answers.actorType === "openai-computer-use"
      ? [
          `live: export OPENAI_API_KEY=sk-… (OPENAI_BASE_URL for another Responses endpoint), then ${next} --live; the key stays in the humanish process, the guest never sees it`,
        ]
      : []),
  ].join("\n");
  const result: InitResult = {
    schema: "humanish.init-result.v1",
    ok: true,
    cwd: opts.cwd,
    via: opts.yes ? "template" : "wizard",
    lab: { id: answers.id, route: answers.route, actor: answers.actorType, mode: answers.mode, path: created.rel, replaced: existed },
    gitignore: gitignore.outcome,
    written,
    warnings: checked.warnings,
    next,
    human,
  };
  // `human` is for the human-mode printer only: keep it out of the `--json` document.
  Object.defineProperty(result, "human", { enumerable: false });
  return result;
}
