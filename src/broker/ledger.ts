/**
 * Ledger dumps: the bytes an owner persists so a restarted owner can still clean up.
 *
 * A dump holds capability hashes only (never a token) and every study and allocation ever
 * recorded — terminal studies and absent allocations are tombstones that are never evicted, so
 * an old id can never be mistaken for a new one. Restoring never restores authority: the new
 * core is in reconciliation mode, every study that was live is terminal (`recovery`), and every
 * non-absent allocation is `releasing` until the owner confirms its absence.
 */
import { z } from "zod";
import type { Entropy } from "./capability.ts";
import { type ClockSample, checkClock } from "./clock.ts";
import { brokerError } from "./errors.ts";
import { ALLOCATION_STATES, type AllocationRecord, isLive, STUDY_STATES, type StudyRecord } from "./model.ts";
import type { Policy } from "./policy.ts";
import { attemptKey, type CoreState, terminate } from "./state.ts";

/** Largest dump: 1 MiB. */
export const MAX_LEDGER_BYTES = 1024 * 1024;
/** Schema id of a dump. */
export const LEDGER_SCHEMA = "humanish.broker-ledger.v1";

const hex32 = z.string().regex(/^[0-9a-f]{32}$/);
const ms = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const allocationSchema = z.strictObject({
  allocation: hex32,
  attempt: hex32,
  state: z.enum(ALLOCATION_STATES),
  creation_open: z.boolean(),
});

const studySchema = z.strictObject({
  study: hex32,
  attempt: hex32,
  uid: z.number().int().min(0).max(0xffff_ffff),
  boot: hex32,
  created_ms: ms,
  startup_deadline_ms: ms,
  study_deadline_ms: ms,
  lease_deadline_ms: ms,
  state: z.enum(STUDY_STATES),
  sequence: ms,
  capability_hash: z.string().regex(/^[0-9a-f]{64}$/),
  allocations: z.array(allocationSchema).max(64),
});

const ledgerSchema = z.strictObject({
  schema: z.literal(LEDGER_SCHEMA),
  installation: hex32,
  boot: hex32,
  boottime_ms: ms,
  mode: z.enum(["accepting", "reconciliation"]),
  studies: z.array(studySchema).max(1024),
});

type StudyJson = z.infer<typeof studySchema>;

/** Serialize `st` (compact JSON, UTF-8). Throws `invalid_ledger` if it would exceed 1 MiB. */
export function dumpLedger(st: CoreState): Uint8Array {
  const doc = {
    schema: LEDGER_SCHEMA,
    installation: st.installation,
    boot: st.clock.bootId,
    boottime_ms: st.clock.boottimeMs,
    mode: st.mode,
    studies: [...st.studies.values()].map(studyJson),
  };
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  if (bytes.byteLength > MAX_LEDGER_BYTES) throw brokerError("invalid_ledger", "ledger");
  return bytes;
}

function studyJson(s: StudyRecord): StudyJson {
  return {
    study: s.study,
    attempt: s.attempt,
    uid: s.uid,
    boot: s.boot,
    created_ms: s.createdMs,
    startup_deadline_ms: s.startupDeadlineMs,
    study_deadline_ms: s.studyDeadlineMs,
    lease_deadline_ms: s.leaseDeadlineMs,
    state: s.state,
    sequence: s.sequence,
    capability_hash: s.capabilityHash,
    allocations: [...s.allocations.values()].map((a) => ({ allocation: a.allocation, attempt: a.attempt, state: a.state, creation_open: a.creationOpen })),
  };
}

/**
 * Rebuild a reconciliation-only core state from `bytes` under `policy`, with `clock` as the new
 * baseline. Throws `invalid_ledger` for oversize or non-UTF-8 bytes, JSON that is not exactly a
 * dump, duplicate ids, or records that break the ledger's own rules (a terminal study holding an
 * allocation that is neither releasing nor absent; an open creation outside creating/releasing);
 * `invalid_clock` for a malformed clock. A policy tighter than the dumped one evicts nothing:
 * held slots are kept for cleanup even above the new limits (no new slot can be granted anyway).
 */
export function restoreState(bytes: Uint8Array, policy: Readonly<Policy>, entropy: Entropy, clock: ClockSample): CoreState {
  const c = checkClock(clock);
  const doc = parseLedger(bytes);
  const st: CoreState = {
    policy,
    installation: doc.installation,
    entropy,
    mode: "reconciliation",
    clock: { bootId: c.bootId, boottimeMs: c.boottimeMs },
    studies: new Map(),
    attempts: new Map(),
    used: 0,
    usedByStudy: new Map(),
  };
  for (const j of doc.studies) addStudy(st, j);
  // Old leases mean nothing after a restart: every study still live becomes terminal.
  for (const s of st.studies.values()) if (isLive(s.state)) terminate(st, s, "recovery");
  return st;
}

function parseLedger(bytes: Uint8Array): z.infer<typeof ledgerSchema> {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > MAX_LEDGER_BYTES) throw brokerError("invalid_ledger", "ledger");
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw brokerError("invalid_ledger", "ledger");
  }
  const parsed = ledgerSchema.safeParse(raw);
  if (!parsed.success) throw brokerError("invalid_ledger", "ledger");
  return parsed.data;
}

function addStudy(st: CoreState, j: StudyJson): void {
  const key = attemptKey(j.uid, j.attempt);
  if (st.studies.has(j.study) || st.attempts.has(key)) throw brokerError("invalid_ledger", "ledger");
  const allocations = new Map<string, AllocationRecord>();
  const attempts = new Set<string>();
  let used = 0;
  for (const a of j.allocations) {
    if (allocations.has(a.allocation) || attempts.has(a.attempt)) throw brokerError("invalid_ledger", "ledger");
    if (!isLive(j.state) && a.state !== "releasing" && a.state !== "absent") throw brokerError("invalid_ledger", "ledger");
    if (a.creation_open && a.state !== "creating" && a.state !== "releasing") throw brokerError("invalid_ledger", "ledger");
    allocations.set(a.allocation, { allocation: a.allocation, attempt: a.attempt, state: a.state, creationOpen: a.creation_open });
    attempts.add(a.attempt);
    if (a.state !== "absent") used++;
  }
  st.studies.set(j.study, {
    study: j.study,
    attempt: j.attempt,
    uid: j.uid,
    boot: j.boot,
    createdMs: j.created_ms,
    startupDeadlineMs: j.startup_deadline_ms,
    studyDeadlineMs: j.study_deadline_ms,
    leaseDeadlineMs: j.lease_deadline_ms,
    state: j.state,
    sequence: j.sequence,
    capabilityHash: j.capability_hash,
    allocations,
  });
  st.attempts.set(key, j.study);
  st.usedByStudy.set(j.study, used);
  st.used += used;
}
