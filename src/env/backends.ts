/**
 * Environment backends: turn a {@link SandboxProvider} (docker or e2b) into the
 * {@link EnvBackend} the environment uses, with the sandbox image/template and limits fixed.
 */
import type { SandboxProvider } from "../sandbox/types.ts";
import type { EnvBackend } from "./environment.ts";
import { SANDBOX_WORKDIR } from "./environment.ts";

/** Limits and placement of every episode's sandbox. Units: bytes, CPUs. */
export interface EnvSandboxSpec {
  /** Docker image reference or E2B template id. */
  image: string;
  /** `none` (default) or `bridge`. */
  network?: "none" | "bridge";
  memoryBytes?: number;
  cpus?: number;
  pidsLimit?: number;
  /** Extra labels on every sandbox (never secret), e.g. a test run label. */
  labels?: Record<string, string>;
}

/** Wraps a provider: every episode gets a fresh sandbox of `spec`, labelled for the env server. */
export function envBackendFromProvider(provider: SandboxProvider, spec: EnvSandboxSpec): EnvBackend {
  return {
    name: provider.provider,
    create: ({ runId, labels, onCreated }) =>
      provider.create({
        runId,
        image: spec.image,
        network: spec.network ?? "none",
        workdir: SANDBOX_WORKDIR,
        labels: { ...(spec.labels ?? {}), ...labels, "humanish.component": "env" },
        onCreated,
        ...(spec.memoryBytes !== undefined ? { memoryBytes: spec.memoryBytes } : {}),
        ...(spec.cpus !== undefined ? { cpus: spec.cpus } : {}),
        ...(spec.pidsLimit !== undefined ? { pidsLimit: spec.pidsLimit } : {}),
      }),
  };
}
