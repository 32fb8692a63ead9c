/**
 * The state one verify pass shares between its checks. The input half is fixed by the caller;
 * the derived half is filled by checks in table order (a later check reads what an earlier one
 * parsed, e.g. the bundle, the traces, the signer), so every check is a named function of this
 * context and the table in ./core.ts is the only place that orders them.
 */

import type { PngAdmission } from "../png.ts";
import type { ActorTrace, CleanupProof, RunBundle, SandboxReceipt, TerminalLedgers } from "../schemas.ts";
import type { TrustSet } from "../signing/trust.ts";

/** A path the disk walk saw but did not read (directory, link, special or oversized file). */
export interface UnreadPath {
  path: string;
  dir: boolean;
}

/**
 * A binary PNG the disk walk read once and let go (./digest.ts): what every check needs of its
 * bytes, computed from them while they were in hand.
 */
export interface DigestedFile {
  /** Bytes read. */
  size: number;
  /** Hex SHA-256 of the bytes. */
  sha256: string;
  /** The admission verdict of the bytes. */
  admission: PngAdmission;
  /** Secret and local-path shape names its content scan found (see `scanContent`). */
  shapes: string[];
}

/** The bundle's signer, once its signature checked out. */
export interface Signer {
  publicKey: string;
  fingerprint: string;
  trusted: boolean;
}

export interface VerifyContext {
  /** The run directory's name (the run id it must carry). */
  readonly run: string;
  /** Every regular file read, by bundle-relative path. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** Every binary PNG read and digested instead of held, by bundle-relative path (disjoint from `files`). */
  readonly digested: ReadonlyMap<string, DigestedFile>;
  readonly unread: readonly UnreadPath[];
  /** Problems the disk walk found (links, special files, bounds). */
  readonly containment: readonly string[];
  readonly trust: TrustSet;
  /** The continued run's `run.json` bytes as found beside this one (see `VerifyFilesInput.continued`). */
  readonly continued: { runId: string; bytes: Uint8Array | null } | undefined;

  rawBundle: unknown;
  bundle: RunBundle | null;
  signer: Signer | null;
  /** Digest of the manifest the signature covers, when it verified. */
  manifestSha256: string | null;
  /** Unlisted files accepted as signed appendices (each appendix and its signature file). */
  appendices: Set<string>;
  /** Why an unlisted file was not accepted as an appendix, by path. */
  appendixProblems: Map<string, string>;
  traces: Map<string, ActorTrace>;
  /** The root `terminal-ledgers.json` (a one-seat terminal run). */
  ledgers: TerminalLedgers | null;
  /** Each seat's `seats/<id>/terminal-ledgers.json` (a many-seat terminal run), by seat id. */
  seatLedgers: Map<string, TerminalLedgers>;
  receipts: SandboxReceipt[];
  orphanReleases: CleanupProof[];
  scanFindings: number;
  raw: boolean;
  unscanned: string[];
  warnings: string[];
}

/** What one check reports: its problems (none = ok) and the message when ok. */
export interface CheckOutcome {
  problems: string[];
  ok: string;
}

/** A named check of the table. */
export type Check = (ctx: VerifyContext) => CheckOutcome | Promise<CheckOutcome>;
