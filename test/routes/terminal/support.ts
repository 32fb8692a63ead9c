/**
 * Shared helpers of the terminal route tests: a throwaway project directory, a StudyContext built
 * the way the CLI builds one, and run-label container lookups for leak checks (by label only to
 * FIND leaks; removal is always by exact id).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createDockerClient } from "../../../src/docker/index.ts";
import { parseLab } from "../../../src/lab/index.ts";
import type { LabConfig } from "../../../src/lab/schema.ts";
import type { ProgressEvent, StudyContext } from "../../../src/routes/types.ts";
import { dockerSocketPath } from "../../support/prereq.ts";

/** Repository root. */
export const REPO = resolve(import.meta.dir, "../../..");

/** A fresh project dir under the OS temp dir; `cleanup()` removes it. */
export function tmpProject(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "humanish-terminal-test-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A unique run id for a test. */
export function testRunId(tag: string): string {
  return `test-${tag}-${randomBytes(4).toString("hex")}`;
}

/** Parses lab YAML text; throws with the parse error when invalid. */
export function labFromText(text: string): LabConfig {
  const r = parseLab(text);
  if (!r.ok) throw new Error(`lab did not parse: ${r.error.code} ${r.error.message}`);
  return r.config;
}

/** Reads and parses a committed lab (`labs/<name>.yaml`). */
export function committedLab(name: string): { config: LabConfig; text: string; ref: string } {
  const ref = `labs/${name}.yaml`;
  const text = readFileSync(join(REPO, ref), "utf8");
  return { config: labFromText(text), text, ref };
}

/** Builds a StudyContext like the CLI does. `progress` events are collected in `events`. */
export function studyContext(args: {
  cwd: string;
  lab: LabConfig;
  text: string;
  ref?: string;
  runId: string;
  mode: "dry-run" | "live";
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
}): StudyContext<LabConfig> & { events: ProgressEvent[] } {
  const events: ProgressEvent[] = [];
  return {
    cwd: args.cwd,
    lab: args.lab,
    labSource: { ref: args.ref ?? "labs/inline.yaml", sha256: createHash("sha256").update(args.text).digest("hex") },
    labWarnings: [],
    runId: args.runId,
    mode: args.mode,
    env: args.env ?? { PATH: process.env.PATH },
    signal: args.signal ?? new AbortController().signal,
    progress: (e) => events.push(e),
    events,
  };
}

/** Ids of containers carrying `humanish.run=<runId>` (to detect leaks). */
export async function containersOfRun(runId: string): Promise<string[]> {
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  const rows = await docker.containerList({ all: true, labels: [`humanish.run=${runId}`] });
  return rows.map((r) => r.Id);
}

/** Removes the given containers by exact id (test cleanup after a failed assertion). */
export async function removeContainers(ids: readonly string[]): Promise<void> {
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  for (const id of ids) await docker.containerRemove(id, { force: true }).catch(() => undefined);
}

/** Every regular file under `dir` (relative paths). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else out.push(r);
    }
  };
  walk(dir, "");
  return out.sort();
}
