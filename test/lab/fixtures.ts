/**
 * Helpers for lab tests: the committed labs as text and as plain objects, and a way to write a
 * mutated object back to YAML text.
 */

import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import type { LabConfig, LabWarning } from "../../src/lab/index.ts";
import { parseLab } from "../../src/lab/index.ts";

export const LABS_DIR = join(import.meta.dir, "../../labs");
export const COMMITTED_LABS = [
  "jq-first-contact",
  "codex-first-contact",
  "todomvc-first-run",
  "jq-first-contact-seats",
  "todomvc-first-run-seats",
  "todomvc-computer-use",
] as const;

/** The committed lab's text. */
export function labText(id: string): string {
  return readFileSync(join(LABS_DIR, `${id}.yaml`), "utf8");
}

/** The committed lab as a plain object (a fresh copy each call). */
export function labObject(id: string): Record<string, any> {
  return parse(labText(id)) as Record<string, any>;
}

/** YAML text of `obj`. */
export function toYaml(obj: unknown): string {
  return stringify(obj, { version: "1.2" });
}

/** Parses and expects success; returns config and warnings. */
export function accept(text: string): { config: LabConfig; warnings: LabWarning[] } {
  const r = parseLab(text, { source: "t.yaml" });
  if (!r.ok) throw new Error(`expected the lab to parse, got: ${r.error.message}`);
  return r;
}

/** Parses and expects HUMANISH_LAB_INVALID; returns the message. */
export function reject(text: string): string {
  const r = parseLab(text, { source: "t.yaml" });
  if (r.ok) throw new Error(`expected a rejection, but it parsed:\n${text}`);
  expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
  return r.error.message;
}

/** A small valid terminal lab object (scripted-terminal). */
export function terminalBase(): Record<string, any> {
  return {
    schema: "humanish.lab.v2",
    id: "t1",
    subject: { source: "terminal-product", product: { name: "jq", publicSurfaces: ["https://jqlang.org/manual/"] } },
    actors: [{ type: "scripted-terminal", steps: [{ run: "jq --version" }] }],
  };
}

/** A small valid codex-exec lab object. */
export function codexBase(): Record<string, any> {
  return {
    schema: "humanish.lab.v2",
    id: "c1",
    subject: { source: "terminal-product", product: { name: "jq", publicSurfaces: ["https://jqlang.org/manual/"] } },
    actors: [{ type: "codex-exec", mission: "Try jq.", tasks: [{ id: "version", goal: "Print jq's version.", check: { run: "true" } }] }],
  };
}

/** A small valid browser lab object (scripted-browser). */
export function browserBase(): Record<string, any> {
  return {
    schema: "humanish.lab.v2",
    id: "b1",
    subject: { source: "app-url", appUrl: "http://127.0.0.1:4173/" },
    actors: [{ type: "scripted-browser", steps: [{ open: "/" }, "screenshot"] }],
  };
}

/** A small valid computer-use lab object. */
export function cuaBase(): Record<string, any> {
  return {
    schema: "humanish.lab.v2",
    id: "u1",
    subject: { source: "app-url", appUrl: "http://localhost:4173/app" },
    actors: [{ type: "openai-computer-use", mission: "Add a todo.", tasks: [{ id: "home", goal: "Open the home page.", check: { urlIncludes: "/" } }] }],
  };
}
