/**
 * Property: no secret can be rebuilt from the terminal event stream. Every canary (provisioned
 * values, marked values with spaces and control bytes, unprovisioned secret shapes of bounded and
 * unbounded length, multi-line PEM blocks) is split at every offset across 2 and 3 output chunks,
 * with and without pauses between them, in short lines, in a line past the flush size and between
 * newlines — through the real recorder and the real run writer. The joined `chunk` fields of
 * `terminal-events.ndjson` (decoded), and every file of the run, must not contain it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeOutputText, encodeOutputString } from "../../src/bundle/output-codec.ts";
import { createRunWriter } from "../../src/bundle/writer.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE } from "../../src/terminal-seat/recorder.ts";
import { listFiles, testRunId, tmpProject } from "../routes/terminal/support.ts";

const project = tmpProject();
afterAll(() => project.cleanup());
const enc = new TextEncoder();

/** Built at run time so no literal key sits in the tree. */
const body = (n: number) => Array.from({ length: n }, (_, i) => "aB3xQ9zK7m"[i % 10]).join("");

interface Canary {
  name: string;
  /** The text the product prints. */
  text: string;
  /** Provisioned secret values (literal scrub), if any. */
  provisioned: string[];
  /** Substrings whose presence in any output means the secret leaked. */
  leaks: string[];
}

const PEM_BODY = ["MIIEowIBAAKCAQEA1f2k9Zq7", "Xb3mQ9zK7maB3xQ9zK7maB3x", "Q9zK7maB3xQ9zK7maB3xQ9zK"];
const CANARIES: Canary[] = [
  { name: "provisioned env value", text: "zq9-canary-7731-secret", provisioned: ["zq9-canary-7731-secret"], leaks: ["zq9-canary-7731-secret"] },
  { name: "provisioned sk-proj key", text: `sk-proj-${body(48)}`, provisioned: [`sk-proj-${body(48)}`], leaks: [body(20)] },
  { name: "unprovisioned sk-proj key (unbounded shape)", text: `sk-proj-${body(64)}`, provisioned: [], leaks: [body(20)] },
  { name: "bearer token (shape with a space)", text: `Bearer ${body(40)}`, provisioned: [], leaks: [body(24)] },
  {
    name: "PEM private key block (multi-line shape)",
    text: `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END RSA PRIVATE KEY-----`,
    provisioned: [],
    leaks: PEM_BODY,
  },
  {
    name: "PEM private key block that never ends (truncated key)",
    text: `-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n`,
    provisioned: [],
    leaks: PEM_BODY,
  },
  { name: "database URL with a password", text: "postgres://admin:hunter22Secretpw@db.internal:5432/app", provisioned: [], leaks: ["hunter22Secretpw"] },
  { name: "marked value with spaces", text: "open sesame 4471 vault", provisioned: ["open sesame 4471 vault"], leaks: ["open sesame 4471 vault"] },
  { name: "value with a backslash and a control byte", text: "pa\\ss-77\u0001zzq", provisioned: ["pa\\ss-77\u0001zzq"], leaks: ["pa\\ss-77\u0001zzq"] },
];

/** Text printed before the canary (joined to its first piece), and the chunks printed after it. */
type Context = { before: string; after: string[] };
const CONTEXTS: Record<string, Context> = {
  "short line": { before: "before ", after: [" after\n"] },
  // The breaker's repro: a long line, the secret, then more output that pushes the line past the flush size.
  "past the flush size": { before: "a".repeat(65100), after: ["b".repeat(500), "\n"] },
  "between newlines": { before: "x\n", after: ["\ny\n"] },
  "glued to text": { before: "key=", after: ["!", "\n"] },
};

/** Every way to print `text` in a context: 2 chunks at each offset, 3 chunks at each offset and the midpoint after it. */
function splits({ before, after }: Context, text: string): string[][] {
  const out: string[][] = [];
  for (let k = 1; k < text.length; k++) {
    out.push([before + text.slice(0, k), text.slice(k), ...after]);
    const j = k + Math.max(1, Math.floor((text.length - k) / 2));
    if (j < text.length) out.push([before + text.slice(0, k), text.slice(k, j), text.slice(j), ...after]);
  }
  return out;
}

function leaksIn(hay: string, c: Canary): string | undefined {
  return c.leaks.find((l) => hay.includes(l) || hay.includes(encodeOutputString(l)));
}

describe("terminal events: a secret never straddles a chunk boundary", () => {
  for (const c of CANARIES) {
    test(c.name, async () => {
      for (const [ctxName, ctx] of Object.entries(CONTEXTS)) {
        const writer = createRunWriter({ cwd: project.dir, runId: testRunId("straddle"), secrets: c.provisioned, heartbeatMs: 0 });
        const cases = splits(ctx, c.text);
        for (let n = 0; n < cases.length; n++) {
          const rec = createTerminalRecording({ writer, participantId: `case-${n}`, redact: (s) => writer.redactor.text(s), onProgress: () => {} });
          for (const piece of cases[n]!) {
            rec.recorder.output("stdout", enc.encode(piece));
            // Pauses let earlier appends land before the next piece arrives, as on a real stream.
            if (n % 5 === 0) await Bun.sleep(1);
          }
          expect(await rec.flush()).toEqual([]);
        }
        const bySource = new Map<string, string[]>();
        for (const line of readFileSync(join(writer.runDir, TERMINAL_EVENTS_FILE), "utf8").trim().split("\n")) {
          const e = JSON.parse(line) as { source: string; chunk: string };
          bySource.set(e.source, [...(bySource.get(e.source) ?? []), e.chunk]);
        }
        expect(bySource.size).toBe(cases.length);
        for (const [source, chunks] of bySource) {
          const joined = chunks.join("");
          const decoded = new TextDecoder().decode(decodeOutputText(joined));
          const leak = leaksIn(joined, c) ?? leaksIn(decoded, c);
          if (leak !== undefined)
            throw new Error(
              `${c.name} / ${ctxName} / ${source}: joined chunks rebuild ${JSON.stringify(leak)}: ${JSON.stringify(chunks.map((x) => x.slice(-80)))}`,
            );
          // Cutting changes nothing: the joined chunks equal the unsplit output redacted at once.
          const whole = writer.redactor.text(encodeOutputString(ctx.before + c.text + ctx.after.join("")));
          expect(whole).toContain("[REDACTED_SECRET]");
          if (joined !== whole)
            throw new Error(`${c.name} / ${ctxName} / ${source}: joined chunks keep part of the secret: ${JSON.stringify(chunks.map((x) => x.slice(-80)))}`);
        }
        for (const f of listFiles(writer.runDir)) {
          const text = readFileSync(join(writer.runDir, f), "utf8");
          expect(leaksIn(text, c)).toBeUndefined();
        }
      }
    }, 120_000);
  }
});
