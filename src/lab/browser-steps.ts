/**
 * Scripted-browser steps: the YAML forms (the bare string `screenshot`, or a one-key mapping
 * `verb: body`) parsed into normalised {@link BrowserStep}s, with a problem per bad step that
 * names its path (`actors[0].steps[3].click.x`). The step semantics are documented on
 * {@link BrowserStep} in schema-browser.ts.
 */
import type { z } from "zod";
import { nearest } from "../text/nearest.ts";
import { type Problem, problemFromZod } from "./issues.ts";
import { BROWSER_STEP_BODIES, BROWSER_STEP_KINDS, type BrowserStep, WAIT_FOR_TEXT_DEFAULT_TIMEOUT_MS } from "./schema-browser.ts";
import type { StrictYaml } from "./yaml.ts";

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Parses raw scripted-browser steps into {@link BrowserStep}s, pushing a problem per bad step.
 * Forms: the string `screenshot`, or a mapping with exactly one verb key.
 */
export function parseBrowserSteps(raw: readonly unknown[], yaml: StrictYaml, problems: Problem[]): BrowserStep[] {
  const out: BrowserStep[] = [];
  const verbs: readonly string[] = BROWSER_STEP_KINDS;
  raw.forEach((step, i) => {
    const path = ["actors", 0, "steps", i];
    if (step === "screenshot") {
      out.push({ kind: "screenshot" });
      return;
    }
    if (typeof step === "string") {
      const verb = verbs.includes(step) ? step : nearest(step, verbs);
      problems.push({
        path,
        message: verbs.includes(step)
          ? `\`${step}\` needs a value: write \`${step}: …\` (only \`screenshot\` stands alone)`
          : `\`${step}\` is not a step${verb ? ` (did you mean \`${verb}\`?)` : ""}; steps are ${verbs.join(", ")}`,
      });
      return;
    }
    if (!isMapping(step)) {
      problems.push({
        path,
        message: `must be a one-key mapping such as \`click: {x: 10, y: 20}\` or the string \`screenshot\` (got ${Array.isArray(step) ? "a list" : step === null ? "an empty value" : typeof step})`,
      });
      return;
    }
    const keys = Object.keys(step);
    if (keys.length !== 1) {
      problems.push({
        path,
        message:
          keys.length === 0
            ? "is an empty mapping; write one action such as `open: /`"
            : `has ${keys.length} keys (${keys.join(", ")}); each step is exactly one action — split it into ${keys.length} steps`,
      });
      return;
    }
    const verb = keys[0]!;
    if (!verbs.includes(verb)) {
      const hint = nearest(verb, verbs);
      problems.push({
        path,
        key: verb,
        message: `is not a step${hint ? ` (did you mean \`${hint}\`?)` : ""}; steps are ${verbs.join(", ")}`,
        unknownKey: true,
      });
      return;
    }
    const body = (BROWSER_STEP_BODIES as Record<string, z.ZodType>)[verb]!;
    const r = body.safeParse(step[verb], { reportInput: true });
    if (!r.success) {
      problems.push(...r.error.issues.map((i) => problemFromZod(i, yaml, [...path, verb])));
      return;
    }
    out.push(toStep(verb as BrowserStep["kind"], r.data));
  });
  return out;
}

function toStep(kind: BrowserStep["kind"], data: unknown): BrowserStep {
  switch (kind) {
    case "open":
      return { kind, path: data as string };
    case "click": {
      const d = data as { x: number; y: number; button: "left" | "right" | "middle" };
      return { kind, x: d.x, y: d.y, button: d.button };
    }
    case "type":
      return { kind, text: data as string };
    case "press":
      return { kind, keys: data as string[] };
    case "scroll": {
      const d = data as { x?: number; y?: number; scrollX: number; scrollY: number };
      return { kind, ...(d.x !== undefined ? { x: d.x } : {}), ...(d.y !== undefined ? { y: d.y } : {}), scrollX: d.scrollX, scrollY: d.scrollY };
    }
    case "wait":
      return { kind, ms: (data as { ms: number }).ms };
    case "waitForText":
      return { kind, text: data as string, timeoutMs: WAIT_FOR_TEXT_DEFAULT_TIMEOUT_MS };
    case "screenshot":
      return { kind, label: data as string };
  }
}
