/**
 * Property tests (seeded, reproducible): redaction never lets a provisioned value through and is
 * idempotent; the verify core, run in memory over 10,000 mutated bundles (byte flips,
 * truncations, added and removed files, JSON field edits, listings re-digested, whole bundles
 * re-signed by another key), detects every mutation that changes a byte — or, when the mutant
 * is re-signed by a key outside the trust set, never calls it shareable.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type BundleFile, createRedactor, findSensitive, sealRunDir, verifyFiles } from "../../src/bundle/index.ts";
import { sha256Hex } from "../../src/bytes/sha256.ts";
import { rng } from "../support/rng.ts";
import { tempProject, writeLiveBrowser, writeLiveTerminal } from "./helpers.ts";
import { listedPaths, loadFiles, resign, testKey } from "./memory.ts";

const NOISE = "abcXYZ019 _-./:=\"'\\\n\t{}[]()<>@%+~é中/tmp/home/Users/sk-ghp_AKIAeyJ";
const SECRET_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

describe("redaction properties", () => {
  test("no provisioned value survives, whatever surrounds it (2,000 seeded cases)", () => {
    const rnd = rng(0xb0d1e5);
    for (let i = 0; i < 2000; i++) {
      const pick = (s: string) => s[Math.floor(rnd() * s.length)]!;
      const len = 4 + Math.floor(rnd() * 36);
      // Secrets always carry a digit so they cannot be a substring of a [REDACTED_…] marker.
      let secret = String(Math.floor(rnd() * 10));
      while (secret.length < len) secret += pick(SECRET_CHARS);
      const noise = () => Array.from({ length: Math.floor(rnd() * 40) }, () => pick(NOISE)).join("");
      let text = noise();
      const copies = 1 + Math.floor(rnd() * 3);
      for (let c = 0; c < copies; c++) text += secret + noise();
      const r = createRedactor([secret, "other-value-77"]);
      const out = r.text(text);
      expect({ i, secret, leaked: out.includes(secret) }).toEqual({ i, secret, leaked: false });
      expect(r.containsSecret(out)).toBe(false);
      // JSON path as well (escaping must not reveal it)
      expect(r.json({ text, nested: [text] }).includes(secret)).toBe(false);
    }
  });

  test("redaction is idempotent and leaves no detectable shape (2,000 seeded cases)", () => {
    const rnd = rng(42);
    const pieces = [
      `sk-proj-${"A".repeat(25)}`,
      "/tmp/x/y",
      "/home/u/.cfg",
      "/Users/me/a b",
      `Bearer ${"t".repeat(30)}`,
      "postgres://u:p@h/db",
      `AKIA${"B".repeat(16)}`,
      "ok text",
      '"quoted"',
      "http://127.0.0.1:8080/tmp/page",
      `e2b_${"c".repeat(20)}`,
      "https://x.e2b.dev/p",
      `eyJ${"a".repeat(20)}.${"b".repeat(20)}.${"c".repeat(10)}`,
    ];
    const r = createRedactor(["s3cr3t-v4lue"]);
    for (let i = 0; i < 2000; i++) {
      const n = 1 + Math.floor(rnd() * 6);
      const text = Array.from({ length: n }, () => pieces[Math.floor(rnd() * pieces.length)]!).join(rnd() < 0.5 ? " " : "\n");
      const once = r.text(text);
      expect(r.text(once)).toBe(once);
      expect(findSensitive(once)).toEqual([]);
    }
  });
});

/** Mutation classes of the verify fuzz. */
const CLASSES = ["flip", "truncate", "add", "remove", "json-edit", "flip+redigest", "json-edit+redigest", "resign-other-key"] as const;
type MutationClass = (typeof CLASSES)[number];

/** A mutated copy of `files` (never modifying the originals' arrays). */
function mutate(files: readonly BundleFile[], runId: string, cls: MutationClass, rnd: () => number, attacker: ReturnType<typeof testKey>): BundleFile[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const out = files.map((f) => ({ ...f }));
  const flip = (f: BundleFile) => {
    const b = new Uint8Array(f.bytes);
    const off = Math.floor(rnd() * b.length);
    b[off] = b[off]! ^ (1 << Math.floor(rnd() * 8));
    f.bytes = b;
  };
  const jsonEdit = (f: BundleFile): boolean => {
    const text = new TextDecoder().decode(f.bytes);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return false;
    }
    const leaves: [Record<string, unknown> | unknown[], string | number][] = [];
    const stack: unknown[] = [doc];
    while (stack.length) {
      const v = stack.pop();
      if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          if (x && typeof x === "object") stack.push(x);
          else leaves.push([v as Record<string, unknown>, Array.isArray(v) ? Number(k) : k]);
        }
    }
    if (!leaves.length) return false;
    const [parent, key] = pick(leaves);
    const old = (parent as Record<string | number, unknown>)[key];
    (parent as Record<string | number, unknown>)[key] =
      typeof old === "number" ? old + 1 : typeof old === "string" ? `${old}${pick(["x", " ", "0", "Z"])}` : typeof old === "boolean" ? !old : "x";
    f.bytes = new TextEncoder().encode(`${JSON.stringify(doc, null, text.includes("\n  ") ? 2 : undefined)}${text.endsWith("\n") ? "\n" : ""}`);
    return true;
  };
  const redigest = (path: string) => {
    const run = out.find((f) => f.path === "run.json")!;
    const target = out.find((f) => f.path === path);
    const doc = JSON.parse(new TextDecoder().decode(run.bytes));
    const a = (doc.artifacts as { path: string; bytes: number; sha256: string }[]).find((x) => x.path === path);
    if (!a || !target) return;
    a.bytes = target.bytes.byteLength;
    a.sha256 = sha256Hex(target.bytes);
    run.bytes = new TextEncoder().encode(`${JSON.stringify(doc, null, 2)}\n`);
  };
  const listed = listedPaths(files);
  switch (cls) {
    case "flip":
      flip(pick(out));
      return out;
    case "truncate": {
      const f = pick(out);
      f.bytes = f.bytes.slice(0, Math.floor(rnd() * f.bytes.length));
      return out;
    }
    case "add": {
      const dir = pick(["", "screenshots/", "report/", "actors/", ".tmp-"]);
      out.push({
        path: `${dir}extra-${Math.floor(rnd() * 1e6)}${pick([".json", ".txt", ".png", ".sig.json", ""])}`,
        bytes: new TextEncoder().encode(pick(["{}", "x", "", "[]\n"])),
      });
      return out;
    }
    case "remove":
      out.splice(Math.floor(rnd() * out.length), 1);
      return out;
    case "json-edit":
      jsonEdit(pick(out.filter((f) => f.path.endsWith(".json"))));
      return out;
    case "flip+redigest": {
      const target = pick(listed);
      const f = out.find((x) => x.path === target)!;
      flip(f);
      redigest(f.path);
      return out;
    }
    case "json-edit+redigest": {
      const target = pick(listed.filter((p) => p.endsWith(".json")));
      const f = out.find((x) => x.path === target);
      if (f && jsonEdit(f)) redigest(f.path);
      return out;
    }
    case "resign-other-key": {
      const inner = mutate(files, runId, pick(CLASSES.slice(0, -1)), rnd, attacker);
      return resign(inner, runId, attacker);
    }
  }
}

function sameFiles(a: readonly BundleFile[], b: readonly BundleFile[]): boolean {
  if (a.length !== b.length) return false;
  const m = new Map(a.map((f) => [f.path, f.bytes]));
  return b.every((f) => {
    const x = m.get(f.path);
    return x !== undefined && x.byteLength === f.bytes.byteLength && Buffer.from(x).equals(Buffer.from(f.bytes));
  });
}

describe("verify core fuzz: 10,000 mutated bundles in memory", () => {
  const p = tempProject();
  afterAll(() => p.cleanup());

  test("every byte-changing mutation is detected; an attacker's re-signature is never shareable", async () => {
    await writeLiveTerminal(p.cwd, "fz-t");
    const bw = await writeLiveBrowser(p.cwd, "fz-b");
    sealRunDir(bw.runDir, bw.runId);
    const own = testKey();
    const attacker = testKey();
    const bundles = await Promise.all(
      ["fz-t", "fz-b"].map(async (runId) => ({ runId, files: resign(await loadFiles(join(p.cwd, ".humanish/runs", runId)), runId, own) })),
    );
    for (const b of bundles) {
      const v = await verifyFiles({ run: b.runId, files: b.files, trust: own.trust });
      expect({ runId: b.runId, ok: v.ok }).toEqual({ runId: b.runId, ok: true });
    }
    const rnd = rng(0x5eed);
    const tally: Record<string, { detected: number; untrusted: number; identical: number }> = {};
    for (let i = 0; i < 10_000; i++) {
      const b = bundles[i % 2]!;
      const cls = CLASSES[Math.floor(rnd() * CLASSES.length)]!;
      const mutated = mutate(b.files, b.runId, cls, rnd, attacker);
      const t = (tally[cls] ??= { detected: 0, untrusted: 0, identical: 0 });
      // A mutation that leaves every byte as it was is harmless by construction.
      if (sameFiles(b.files, mutated)) {
        t.identical++;
        continue;
      }
      const v = await verifyFiles({ run: b.runId, files: mutated, trust: own.trust });
      if (!v.ok) {
        t.detected++;
        continue;
      }
      // Passing checks is possible only for a bundle its (untrusted) signer re-signed.
      expect({ i, cls, runId: b.runId, status: v.shareSafety.status, trusted: v.signer?.trusted }).toEqual({
        i,
        cls,
        runId: b.runId,
        status: "local_only",
        trusted: false,
      });
      t.untrusted++;
    }
    // Every class ran, and only the re-signing class ever got past the checks.
    for (const c of CLASSES) expect(tally[c]?.detected ?? 0).toBeGreaterThan(0);
    for (const c of CLASSES.slice(0, -1)) expect({ c, untrusted: tally[c]!.untrusted }).toEqual({ c, untrusted: 0 });
  }, 120_000); // CPU-bound and seeded: only a starved machine makes it slow, never a bug
});
