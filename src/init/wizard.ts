/**
 * The interactive `humanish init` wizard, built with `@clack/prompts`.
 *
 * It asks, in order: what is studied (a CLI product or a local web app); the lab id; the
 * product's name, public surfaces and install commands, or the app's loopback URL and how it is
 * served; the participant (scripted with steps, or an LLM actor with its model) and its mission;
 * the tasks (goal + hidden check); the mode and the caps. Every answer is validated by applying
 * it to the draft and running the lab loader's `parseLab` (draft.ts) — the message shown is the
 * loader's own. It then shows the YAML and asks to write it.
 *
 * Cancel (Ctrl+C or Esc at any prompt, or "No" at the final confirmation) returns `null`; the
 * wizard itself never writes a file — the caller writes only after a confirmed draft.
 */

import type { Readable, Writable } from "node:stream";
import * as p from "@clack/prompts";
import {
  checkDraft,
  DEFAULT_MISSION,
  DEFAULT_MODEL,
  type InitAnswers,
  type InitRoute,
  isScripted,
  LLM_ACTOR,
  parseBrowserStep,
  renderLabYaml,
  SCRIPTED_ACTOR,
  templateAnswers,
  validateWith,
} from "./draft.ts";

/** Streams the wizard talks on (default: the process's stdin and stdout). */
export interface WizardIO {
  input?: Readable;
  output?: Writable;
}

/** Thrown internally when the person cancels; turned into `null` by {@link runWizard}. */
class Cancelled extends Error {}

function orCancel<T>(v: T): Exclude<T, symbol> {
  if (p.isCancel(v)) throw new Cancelled("cancelled");
  return v as Exclude<T, symbol>;
}

/** Splits a comma/space separated list, dropping empties. */
function splitList(s: string): string[] {
  return s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
}

/** Parses an optional non-negative number answer; "" → undefined; NaN for junk (the schema rejects it). */
function numberAnswer(s: string | undefined): number | undefined {
  const t = (s ?? "").trim();
  if (t === "") return undefined;
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
}

/**
 * Runs the wizard. Returns the confirmed answers (already valid per `parseLab`), or `null` when
 * the person cancelled. `defaults.id` pre-fills the lab id (`--id`).
 */
export async function runWizard(io: WizardIO, defaults: { id?: string } = {}): Promise<InitAnswers | null> {
  const common = { ...(io.input ? { input: io.input } : {}), ...(io.output ? { output: io.output } : {}) };
  try {
    p.intro("humanish init — create a lab", common);

    const route = orCancel(
      await p.select<InitRoute>({
        ...common,
        message: "What are you studying?",
        options: [
          { value: "terminal", label: "A command-line product", hint: "runs in a Docker sandbox" },
          { value: "browser", label: "A local web app", hint: "a loopback URL in a sandboxed Chromium" },
        ],
      }),
    );
    let a: InitAnswers = templateAnswers(route, defaults.id);

    const text = async (
      message: string,
      def: string | undefined,
      patch: (v: string) => Partial<InitAnswers>,
      extra: { allowEmpty?: boolean } = {},
    ): Promise<string> => {
      const v = orCancel(
        await p.text({
          ...common,
          message,
          ...(def !== undefined && def !== "" ? { placeholder: def, defaultValue: def } : {}),
          validate: (raw) => {
            const value = raw === undefined || raw === "" ? (def ?? "") : raw;
            if (value === "" && !extra.allowEmpty) return "an answer is needed";
            return validateWith(a, patch(value));
          },
        }),
      );
      const value = v === undefined || v === "" ? (def ?? "") : v;
      a = { ...a, ...patch(value) };
      return value;
    };

    await text("Lab id (the file becomes humanish/labs/<id>.yaml)", a.id, (v) => ({ id: v }));
    await text("Title (one line, shown in reports)", a.title, (v) => (v ? { title: v } : { title: undefined }), { allowEmpty: true });

    if (route === "terminal") {
      await text("Product name (the command people install)", a.productName, (v) => ({ productName: v }));
      await text("Public surfaces: URLs where people learn about it (comma-separated)", a.publicSurfaces.join(", "), (v) => ({ publicSurfaces: splitList(v) }));
      await text("Install command run in the sandbox before the participant (type none for no install)", a.install[0] ?? "none", (v) =>
        v.trim() === "none" ? { install: [] } : { install: [v.trim()] },
      );
    } else {
      await text("The app's loopback URL", a.appUrl, (v) => ({ appUrl: v.trim() }));
      const serve = orCancel(
        await p.select<"running" | "command" | "static">({
          ...common,
          message: "How does the app get served?",
          options: [
            { value: "running", label: "It is already running at that URL" },
            { value: "command", label: "humanish starts it with a command" },
            { value: "static", label: "humanish serves a folder of static files" },
          ],
        }),
      );
      if (serve === "running") a = { ...a, serve: { kind: "running" } };
      else if (serve === "command")
        await text("Command that starts the app (it gets PORT in its env)", "npm start", (v) => ({ serve: { kind: "command", command: v } }));
      else await text("Folder to serve (relative to the project)", "public", (v) => ({ serve: { kind: "static", root: v.trim() } }));
    }

    const participant = orCancel(
      await p.select<"scripted" | "llm">({
        ...common,
        message: "Who is the participant?",
        options: [
          { value: "scripted", label: `Scripted (${SCRIPTED_ACTOR[route]})`, hint: "fixed steps, no model, no spend" },
          { value: "llm", label: `An LLM (${LLM_ACTOR[route]})`, hint: "needs an API key when run live" },
        ],
      }),
    );
    const actorType = participant === "scripted" ? SCRIPTED_ACTOR[route] : LLM_ACTOR[route];
    a = { ...a, actorType, ...(participant === "llm" ? { model: DEFAULT_MODEL[actorType], steps: [] } : { model: undefined }) };
    if (participant === "llm") {
      await text("Model", DEFAULT_MODEL[actorType], (v) => ({ model: v.trim() }));
      await text("Mission: the participant's brief (the task goals are added to it)", DEFAULT_MISSION[route], (v) => ({ mission: v.trim() || undefined }));
    }

    if (isScripted(actorType)) {
      const steps: unknown[] = [];
      const hint =
        route === "terminal"
          ? "a shell command"
          : "open /path · click X Y · type TEXT · press Enter · scroll DY · wait MS · waitForText TEXT · screenshot [label]";
      const defaults = a.steps;
      for (;;) {
        const n = steps.length + 1;
        const first = steps.length === 0;
        const v = orCancel(
          await p.text({
            ...common,
            message: `Step ${n} of the scripted participant (${hint})${first ? "" : "; empty to finish"}`,
            ...(first ? { placeholder: "empty keeps the template's steps" } : {}),
            validate: (raw) => {
              const line = (raw ?? "").trim();
              if (line === "") return validateWith(a, { steps: first ? defaults : steps });
              const step = route === "terminal" ? { ok: true as const, step: { run: line } } : parseBrowserStep(line);
              if (!step.ok) return step.message;
              return validateWith(a, { steps: [...steps, step.step] });
            },
          }),
        );
        const line = (v ?? "").trim();
        if (line === "") {
          if (first) steps.push(...defaults);
          break;
        }
        const step = route === "terminal" ? { ok: true as const, step: { run: line } } : parseBrowserStep(line);
        if (step.ok) steps.push(step.step);
      }
      a = { ...a, steps };
    }

    // Tasks: goal + hidden check, until an empty id.
    const tasks: InitAnswers["tasks"] = [];
    for (;;) {
      const first = tasks.length === 0;
      const id = orCancel(
        await p.text({
          ...common,
          message: `Task ${tasks.length + 1} id${first ? " (empty keeps the template's tasks)" : " (empty to finish)"}`,
          validate: (raw) => {
            const v = (raw ?? "").trim();
            if (v === "") return undefined;
            if (tasks.some((t) => t.id === v)) return `task id ${v} is already used`;
            return validateWith(a, { tasks: [...tasks, { id: v, goal: "goal", check: route === "terminal" ? { run: "true" } : { urlIncludes: "/" } }] });
          },
        }),
      );
      const taskId = (id ?? "").trim();
      if (taskId === "") {
        if (first) tasks.push(...a.tasks);
        break;
      }
      let goal = "";
      goal = orCancel(
        await p.text({
          ...common,
          message: `Goal of ${taskId} (the participant sees this)`,
          validate: (raw) => {
            const v = (raw ?? "").trim();
            if (v === "") return "a goal is needed";
            return validateWith(a, { tasks: [...tasks, { id: taskId, goal: v, check: route === "terminal" ? { run: "true" } : { urlIncludes: "/" } }] });
          },
        }),
      ).trim();
      let check: Record<string, unknown>;
      if (route === "terminal") {
        const run = orCancel(
          await p.text({
            ...common,
            message: `Hidden check of ${taskId}: a shell command that exits 0 when the task is done (the participant never sees it)`,
            validate: (raw) => {
              const v = (raw ?? "").trim();
              if (v === "") return "a check command is needed";
              return validateWith(a, { tasks: [...tasks, { id: taskId, goal, check: { run: v } }] });
            },
          }),
        ).trim();
        check = { run };
      } else {
        const kind = orCancel(
          await p.select<"textIncludes" | "urlPathEquals" | "urlIncludes">({
            ...common,
            message: `Hidden check of ${taskId}: what must the page show? (the participant never sees it)`,
            options: [
              { value: "textIncludes", label: "The page text includes …" },
              { value: "urlPathEquals", label: "The URL path equals …" },
              { value: "urlIncludes", label: "The URL includes …" },
            ],
          }),
        );
        const value = orCancel(
          await p.text({
            ...common,
            message:
              kind === "textIncludes"
                ? "Text the page must include"
                : kind === "urlPathEquals"
                  ? "Path the URL must equal (starts with /)"
                  : "Part the URL must include",
            validate: (raw) => {
              const v = (raw ?? "").trim();
              if (v === "") return "a value is needed";
              return validateWith(a, { tasks: [...tasks, { id: taskId, goal, check: { [kind]: v } }] });
            },
          }),
        ).trim();
        check = { [kind]: value };
      }
      tasks.push({ id: taskId, goal, check });
      a = { ...a, tasks: [...tasks] };
    }
    a = { ...a, tasks };

    const mode = orCancel(
      await p.select<"dry-run" | "live">({
        ...common,
        message: "Mode: dry-run or live?",
        options: [
          { value: "dry-run", label: "dry-run", hint: "contract only: starts nothing, spends nothing (default)" },
          { value: "live", label: "live", hint: "runs the participant for real" },
        ],
      }),
    );
    a = { ...a, mode };
    await text("Time cap: minutes the participant may run", String(a.maxMinutes ?? 10), (v) => ({ maxMinutes: numberAnswer(v) }));
    await text("Spend cap in USD (0 = no spend allowed)", String(a.maxUsd ?? 0), (v) => ({ maxUsd: numberAnswer(v) }));
    const analyst = orCancel(
      await p.select<"openai" | "codex" | "none">({
        ...common,
        message: "Findings after the study? (the post-run analyst reads the bundle)",
        options: [
          { value: "openai", label: "openai", hint: "OpenAI API under a USD cap; skipped with a reason without OPENAI_API_KEY (default)" },
          { value: "codex", label: "codex", hint: "your Codex login, billed to your account" },
          { value: "none", label: "none", hint: "review.analysis: false" },
        ],
      }),
    );
    if (analyst === "openai")
      await text("Analyst cap in USD", String(a.analysis && a.analysis.provider === "openai" ? a.analysis.maxCost : 1), (v) => ({
        analysis: { provider: "openai", maxCost: numberAnswer(v) ?? 1 },
      }));
    else a = { ...a, analysis: analyst === "codex" ? { provider: "codex" } : false };

    const final = checkDraft(a);
    if (!final.ok) {
      // Every answer was checked on its own; a combination can still fail — say which, write nothing.
      p.log.error(final.message, common);
      p.cancel("Nothing was written.", common);
      return null;
    }
    p.note(renderLabYaml(a).trimEnd(), `humanish/labs/${a.id}.yaml`, common);
    const ok = orCancel(await p.confirm({ ...common, message: `Write humanish/labs/${a.id}.yaml?`, initialValue: true }));
    if (!ok) {
      p.cancel("Nothing was written.", common);
      return null;
    }
    return a;
  } catch (err) {
    if (err instanceof Cancelled) {
      p.cancel("Cancelled. Nothing was written.", common);
      return null;
    }
    throw err;
  }
}
