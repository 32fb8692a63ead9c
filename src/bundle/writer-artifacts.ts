/**
 * Artifacts and blobs of a run writer: the bytes of one artifact (redacted text, schema-checked
 * JSON, screenshots admitted as PNG instead), written atomically and tracked for the manifest.
 * Each function is one writer method's body; `makeWriter` (./writer.ts) runs it in the queue.
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { artifactRootFor } from "./paths.ts";
import { admitPngBytes } from "./png.ts";
import { ActorTraceSchema, type ArtifactEntry, type ArtifactKind, TerminalLedgersSchema } from "./schemas.ts";
import { atomicWrite } from "./writer-atomic.ts";
import { containedPath } from "./writer-path.ts";
import type { WriterState } from "./writer-state.ts";

/** Options of one artifact write. */
export interface WriteArtifactOptions {
  kind: ArtifactKind;
}

/** Per-kind JSON schemas checked when a JSON artifact is written. */
const JSON_SCHEMAS: Partial<Record<ArtifactKind, z.ZodType>> = {
  "actor-trace": ActorTraceSchema,
  "terminal-ledgers": TerminalLedgersSchema,
};

/**
 * Screenshot bytes as they may be written: PNG bytes (never text) under `screenshots/…png`,
 * admitted as a PNG, with no provisioned secret value in them. Returns `data` unchanged.
 * @throws HUMANISH_INVALID_ARTIFACT, HUMANISH_REDACTION_FAILED
 */
async function admitScreenshot(st: WriterState, rel: string, data: string | Uint8Array): Promise<Uint8Array> {
  if (!(data instanceof Uint8Array)) {
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} must be PNG bytes, got text`, { next: "pass the PNG as a Uint8Array" });
  }
  if (!/^screenshots\/.+\.png$/.test(rel)) {
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} must live under screenshots/ and end in .png`, {
      next: "name screenshots screenshots/NNN.png (or screenshots/<participant>/NNN.png)",
    });
  }
  const adm = await admitPngBytes(data);
  if (!adm.ok) {
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `screenshot ${rel} was not admitted as a PNG: ${adm.code} ${adm.detail}`, {
      next: "only write frames that passed admitPng",
    });
  }
  if (st.redactor.containsSecret(data)) {
    throw new HumanishError("HUMANISH_REDACTION_FAILED", `screenshot ${rel} contains a provisioned secret value in its bytes; it was not written`, {
      next: "strip text chunks from the PNG before writing it",
    });
  }
  return data;
}

/**
 * The bytes to write for `data` at run-relative `rel` of `kind`. `serialisedJson` marks text
 * that `redactor.json` produced: its string values are already redacted, and the serialised
 * document is never scrubbed again (that would rewrite keys and schema words).
 * @throws HUMANISH_INVALID_ARTIFACT (not JSON, or not the kind's schema), HUMANISH_REDACTION_FAILED
 */
export async function prepareBytes(st: WriterState, rel: string, data: string | Uint8Array, kind: ArtifactKind, serialisedJson = false): Promise<Uint8Array> {
  if (kind === "screenshot") return admitScreenshot(st, rel, data);
  const out = typeof data === "string" ? new TextEncoder().encode(serialisedJson ? data : st.redactor.text(data)) : st.redactor.bytes(data);
  const schema = JSON_SCHEMAS[kind];
  let parsed: unknown;
  if (schema) {
    try {
      parsed = JSON.parse(new TextDecoder().decode(out));
    } catch {
      throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) is not valid JSON`, { next: "write it with writeJson" });
    }
    const r = schema.safeParse(parsed);
    if (!r.success) {
      throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) does not match its schema: ${zodIssues(r.error)}`, {
        next: "fix the named field (see src/bundle/schemas.ts)",
      });
    }
  }
  let asText: string | null;
  try {
    asText = new TextDecoder("utf-8", { fatal: true }).decode(out);
  } catch {
    asText = null;
  }
  if (serialisedJson && parsed === undefined) parsed = JSON.parse(asText ?? "null");
  if (serialisedJson ? st.redactor.containsSecretIn(parsed) : st.redactor.containsSecret(asText ?? out)) {
    throw new HumanishError("HUMANISH_REDACTION_FAILED", `${rel}: a secret value survived redaction; nothing was written`, {
      next: "report this as a bug: the redactor must scrub every provisioned value",
    });
  }
  return out;
}

/** Write prepared `bytes` to `abs` atomically and track `rel` as `kind`; returns its manifest entry. */
async function writeTracked(st: WriterState, rel: string, abs: string, bytes: Uint8Array, kind: ArtifactKind): Promise<ArtifactEntry> {
  await atomicWrite(abs, bytes, `${artifactRootFor(st.runId)}/${rel}`);
  st.tracked.set(rel, kind);
  return { path: rel, kind, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
}

/**
 * `RunWriter.writeArtifact`: `data` (text redacted, bytes redacted, screenshots admitted) written
 * atomically at `relPath` and tracked; returns the entry of the bytes written.
 * @throws HUMANISH_UNSAFE_ARTIFACT_PATH, HUMANISH_INVALID_ARTIFACT, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
 */
export async function writeArtifactNow(st: WriterState, relPath: string, data: string | Uint8Array, opts: WriteArtifactOptions): Promise<ArtifactEntry> {
  const { rel, abs } = await containedPath(st, relPath);
  const bytes = await prepareBytes(st, rel, data, opts.kind);
  return writeTracked(st, rel, abs, bytes, opts.kind);
}

/**
 * `RunWriter.writeJson`: `value` redacted value by value, serialised (pretty, trailing newline),
 * schema-checked for known kinds, written atomically and tracked.
 * @throws as {@link writeArtifactNow}
 */
export async function writeJsonNow(st: WriterState, relPath: string, value: unknown, opts: WriteArtifactOptions): Promise<ArtifactEntry> {
  const { rel, abs } = await containedPath(st, relPath);
  const bytes = await prepareBytes(st, rel, st.redactor.json(value), opts.kind, true);
  return writeTracked(st, rel, abs, bytes, opts.kind);
}

/**
 * `RunWriter.addArtifact`: track a file other code wrote in the run directory, after checking it
 * as a write would (rewritten atomically only when redaction changed its bytes).
 * @throws HUMANISH_INVALID_ARTIFACT (no such file), and as {@link writeArtifactNow}
 */
export async function addArtifactNow(st: WriterState, relPath: string, opts: WriteArtifactOptions): Promise<void> {
  const { rel, abs } = await containedPath(st, relPath);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(abs));
  } catch {
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `cannot add ${rel}: no such file in the run directory`, {
      next: "write it with writeArtifact instead",
    });
  }
  // Re-check what other code wrote: screenshots admitted, text free of secrets and shapes.
  const prepared = await prepareBytes(st, rel, bytes, opts.kind);
  if (prepared.byteLength !== bytes.byteLength || sha256Hex(prepared) !== sha256Hex(bytes))
    await atomicWrite(abs, prepared, `${artifactRootFor(st.runId)}/${rel}`);
  st.tracked.set(rel, opts.kind);
}
