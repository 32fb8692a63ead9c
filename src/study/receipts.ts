/**
 * The sandbox receipt every lane appends the moment its machine exists: one line of
 * `sandbox-receipts.ndjson`, fsynced, BEFORE anything is provisioned in it, so a controller
 * killed mid-seat leaves the exact id to release (ARCHITECTURE.md invariant 7).
 */
import type { RunWriter } from "../bundle/writer.ts";

/** One receipt: which seat's machine, where it runs, its exact id, and the lifetime asked of it (ms). */
export interface SandboxReceipt {
  participantId: string;
  provider: string;
  id: string;
  kind: "sandbox" | "desktop";
  timeoutMs: number;
}

/** Appends `r`, stamped now, durably. Rejects with the writer's error when the line cannot be written. */
export async function appendSandboxReceipt(writer: RunWriter, r: SandboxReceipt): Promise<void> {
  await writer.appendNdjson(
    "sandbox-receipts.ndjson",
    { at: new Date().toISOString(), participantId: r.participantId, provider: r.provider, id: r.id, kind: r.kind, timeoutMs: r.timeoutMs },
    { kind: "sandbox-receipts", durable: true },
  );
}
