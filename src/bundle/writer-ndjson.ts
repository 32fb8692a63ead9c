/**
 * NDJSON streams of a run writer: records appended one JSON line at a time as they happen
 * (`terminal-events.ndjson`, `sandbox-receipts.ndjson`, `events.ndjson`), each redacted value by
 * value and checked against its kind's line schema before it is appended.
 */
import { open } from "node:fs/promises";
import type { z } from "zod";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { escapeDelInJson } from "./redact.ts";
import { type ArtifactKind, SandboxReceiptSchema, TerminalEventSchema } from "./schemas.ts";
import { containedPath } from "./writer-path.ts";
import type { WriterState } from "./writer-state.ts";

/** Per-kind NDJSON line schemas. */
export const NDJSON_SCHEMAS: Partial<Record<ArtifactKind, z.ZodType>> = {
  "terminal-events": TerminalEventSchema,
  "sandbox-receipts": SandboxReceiptSchema,
};

/**
 * `RunWriter.appendNdjson`: append `record` (redacted, schema-checked for known kinds) as one line
 * to `relPath` and track it as `opts.kind` (else the kind it is tracked as, else `events`).
 * `opts.durable` fsyncs the line before returning.
 * @throws HUMANISH_UNSAFE_ARTIFACT_PATH, HUMANISH_INVALID_ARTIFACT, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
 */
export async function appendNdjsonNow(st: WriterState, relPath: string, record: unknown, opts: { kind?: ArtifactKind; durable?: boolean }): Promise<void> {
  const { rel, abs } = await containedPath(st, relPath);
  const kind = opts.kind ?? st.tracked.get(rel) ?? "events";
  const redacted = st.redactor.value(record);
  const schema = NDJSON_SCHEMAS[kind];
  if (schema) {
    const r = schema.safeParse(redacted);
    if (!r.success) {
      throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel} (${kind}) record does not match its schema: ${zodIssues(r.error)}`, {
        next: "fix the named field (see src/bundle/schemas.ts)",
      });
    }
  }
  // String values were redacted above; the serialised line is never scrubbed again (that
  // would rewrite keys and schema words).
  const line = escapeDelInJson(JSON.stringify(redacted));
  if (line.includes("\n"))
    throw new HumanishError("HUMANISH_INVALID_ARTIFACT", `${rel}: record serialised with a raw newline`, { next: "report this as a bug" });
  const bytes = new TextEncoder().encode(`${line}\n`);
  if (st.redactor.containsSecretIn(redacted)) {
    throw new HumanishError("HUMANISH_REDACTION_FAILED", `${rel}: a secret value survived redaction; nothing was appended`, {
      next: "report this as a bug",
    });
  }
  try {
    const fh = await open(abs, "a", 0o600);
    try {
      await fh.write(bytes);
      if (opts.durable) await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not append to ${rel}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "check free disk space and permissions of the .humanish directory",
      cause: e,
    });
  }
  st.tracked.set(rel, kind);
}
