import { describe, expect, test } from "bun:test";
import {
  createRedactor,
  digestText,
  findSensitive,
  REDACTED_LOCAL_PATH,
  REDACTED_RUNTIME_PATH,
  REDACTED_SECRET,
  redact,
  SHAPE_NAMES,
  tail,
} from "../../src/bundle/index.ts";
import { matchesOf } from "../../src/bundle/redact-shapes.ts";

/** One sample per secret shape (built at run time so no literal key sits in the tree). */
const rep = (c: string, n: number) => c.repeat(n);
const SAMPLES: Record<string, string> = {
  "openai-key": `sk-proj-${rep("A1b2", 6)}`,
  "openai-key-plain": `sk-${rep("x", 24)}`,
  "anthropic-key": `sk-ant-${rep("k", 24)}`,
  "e2b-key": `e2b_${rep("a1", 10)}`,
  "github-token": `ghp_${rep("Z9", 12)}`,
  "github-pat": `github_pat_${rep("P_", 12)}`,
  "aws-access-key": `AKIA${rep("Q", 16)}`,
  "google-api-key": `AIza${rep("g", 24)}`,
  "stripe-key": `sk_live_${rep("s", 20)}`,
  "huggingface-token": `hf_${rep("h", 32)}`,
  "slack-token": `xoxb-${rep("1", 24)}`,
  jwt: `eyJ${rep("a", 20)}.${rep("b", 22)}.${rep("c", 12)}`,
  "pem-private-key": `-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----`,
  "db-url-credentials": "postgres://admin:hunter22@db.internal:5432/app",
  "npm-token": `//registry.npmjs.org/:_authToken=${rep("n", 24)}`,
  "bearer-token": `Authorization: Bearer ${rep("t", 30)}`,
  "hosted-substrate-url": "https://49983-abc.e2b.app/path?x=1",
  "glued-key": `aaask-proj-${rep("Ab3", 9)}`,
};

describe("redact: secret shapes", () => {
  for (const [name, sample] of Object.entries(SAMPLES)) {
    test(`${name} is redacted and detected`, () => {
      const text = `before ${sample} after`;
      expect(findSensitive(text).length).toBeGreaterThan(0);
      const out = redact(text, []);
      expect(out).toContain(REDACTED_SECRET);
      expect(out).not.toContain(sample);
      expect(out.startsWith("before ")).toBe(true);
      expect(findSensitive(out)).toEqual([]);
    });
  }

  test("every documented shape has a sample", () => {
    const covered = new Set(Object.keys(SAMPLES).map((k) => k.replace(/-plain$/, "")));
    for (const n of SHAPE_NAMES) {
      if (["pem-key-header", "macos-temp-path", "tmp-path", "users-path", "home-path"].includes(n)) continue;
      expect(covered.has(n)).toBe(true);
    }
  });

  test("words that merely contain a prefix are left alone", () => {
    const text =
      "task-abcdefghijklmnopqrstuvwxyz and mask-0123456789abcdefghijkl and ghp_short and task-proj-migration-cleanup-2024 and desk_live_streamingservice1";
    expect(redact(text, [])).toBe(text);
    expect(findSensitive(text)).toEqual([]);
  });

  test("a key glued to preceding letters is caught, by its distinctive prefix and mixed-case body", () => {
    for (const key of [`sk-proj-${rep("Zq7", 10)}`, `sk-ant-${rep("aB9", 9)}`, `github_pat_${rep("x1Y", 8)}`, `ghp_${rep("Q9z", 8)}`]) {
      const text = `see aaa${key} now`;
      expect(redact(text, [])).toBe(`see aaa${REDACTED_SECRET} now`);
      expect(findSensitive(text).length).toBeGreaterThan(0);
    }
  });

  test("a shape or path right after an escaped byte of stored output is still caught", () => {
    const key = `AKIA${rep("Q", 16)}`;
    const text = `bel\\x07${key} esc\\x1b/tmp/x/y`;
    expect(redact(text, [])).toBe(`bel\\x07${REDACTED_SECRET} esc\\x1b${REDACTED_LOCAL_PATH}`);
    expect(redact(`x${key}`, [])).toBe(`x${key}`); // glued to a letter: not a key
  });

  test("hex digests and ISO dates are not secrets", () => {
    const text = `${"ab".repeat(32)} 2026-11-30T02:00:00.000Z ${digestText("x", 16)}`;
    expect(redact(text, [])).toBe(text);
  });
});

describe("redact: local paths", () => {
  test.each([
    ["/tmp/humanish-abc/file.txt", REDACTED_LOCAL_PATH],
    ["/private/tmp/x", REDACTED_LOCAL_PATH],
    ["/var/folders/zz/abc/T/foo", REDACTED_LOCAL_PATH],
    ["/private/var/folders/zz/abc", REDACTED_LOCAL_PATH],
    ["/Users/alice/project/x.ts", REDACTED_LOCAL_PATH],
    ["/home/bob/.ssh/id_rsa", REDACTED_RUNTIME_PATH],
  ])("%s → %s", (path, marker) => {
    const out = redact(`open "${path}" now`, []);
    expect(out).toBe(`open "${marker}" now`);
  });

  test("paths after = and : are still paths", () => {
    expect(redact("PATH=/home/alice/bin:/usr/bin", [])).toBe(`PATH=${REDACTED_RUNTIME_PATH}`);
    expect(redact("dir:/tmp/abc", [])).toBe(`dir:${REDACTED_LOCAL_PATH}`);
    expect(redact("--out=/Users/bob/x", [])).toBe(`--out=${REDACTED_LOCAL_PATH}`);
  });

  test("URL paths and relative paths are not local paths", () => {
    const text = "GET http://127.0.0.1:8080/tmp/x and ./tmp/y and a/home/b";
    expect(redact(text, [])).toBe(text);
  });

  test("paths under the target cwd become [target-cwd]/<rel>", () => {
    const r = createRedactor([], { cwd: "/tmp/proj-1" });
    expect(r.text("wrote /tmp/proj-1/out/a.json and /tmp/proj-10/b")).toBe(`wrote [target-cwd]/out/a.json and ${REDACTED_LOCAL_PATH}`);
  });
});

describe("redact: literal scrub", () => {
  test("every provided value of 4+ chars, longest first, before patterns", () => {
    const out = redact("a=s3cr3tvalue-long b=s3cr3t c=abc", ["s3cr3t", "s3cr3tvalue-long", "abc"]);
    expect(out).toBe(`a=${REDACTED_SECRET} b=${REDACTED_SECRET} c=abc`);
  });

  test("a value provisioned with stray whitespace is scrubbed in its trimmed form too", () => {
    expect(redact("key=abcd-1234-efgh used", ["  abcd-1234-efgh\n"])).toBe(`key=${REDACTED_SECRET} used`);
  });

  test("a secret that would only partially match a shape is scrubbed whole", () => {
    const key = `sk-proj-${"Q".repeat(30)}!tail`;
    const out = redact(`KEY=${key}`, [key]);
    expect(out).toBe(`KEY=${REDACTED_SECRET}`);
  });

  test("JSON: secrets with quotes and backslashes do not survive serialisation in values", () => {
    const secret = 'pa"ss\\word-123';
    const r = createRedactor([secret]);
    const json = r.json({ msg: `x ${secret} y`, list: [secret] });
    expect(json).not.toContain(secret);
    expect(json).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(JSON.parse(json)).toEqual({ msg: `x ${REDACTED_SECRET} y`, list: [REDACTED_SECRET] });
  });

  test("JSON: keys and schema constants are structure and never scrubbed; a secret in another key is still caught", () => {
    const r = createRedactor(["docker", "live-secret-value"], { constants: new Set(["docker", "live"]) });
    const doc = { kind: "docker", mode: "live", note: "ran on docker with live-secret-value", docker: 1 };
    const out = JSON.parse(r.json(doc));
    expect(out).toEqual({ kind: "docker", mode: "live", note: `ran on ${REDACTED_SECRET} with ${REDACTED_SECRET}`, docker: 1 });
    // Schema words are structure, as values and as keys; any other key or value holding a secret
    // value is caught, so a write fails closed.
    expect(r.containsSecretIn(out)).toBe(false);
    expect(r.containsSecretIn({ kind: "docker", note: "ok" })).toBe(false);
    expect(r.containsSecretIn({ "live-secret-value": 1 })).toBe(true);
    expect(r.containsSecretIn({ note: "x live-secret-value" })).toBe(true);
  });

  test("bytes: binary input keeps every other byte exactly", () => {
    const r = createRedactor(["topsecret"]);
    const enc = new TextEncoder().encode("topsecret");
    const input = new Uint8Array([0xff, 0x00, ...enc, 0xfe, 0x80]);
    const out = r.bytes(input);
    expect(r.containsSecret(out)).toBe(false);
    expect(Array.from(out.slice(0, 2))).toEqual([0xff, 0x00]);
    expect(Array.from(out.slice(-2))).toEqual([0xfe, 0x80]);
    expect(Buffer.from(out.slice(2, -2)).toString("latin1")).toBe(REDACTED_SECRET);
  });

  test("bytes: UTF-8 input is redacted as text", () => {
    const r = createRedactor(["ключ-секрет"]);
    const out = new TextDecoder().decode(r.bytes(new TextEncoder().encode("é ключ-секрет /tmp/x")));
    expect(out).toBe(`é ${REDACTED_SECRET} ${REDACTED_LOCAL_PATH}`);
  });
});

describe("redact: percent-encoded tokens", () => {
  test("a URL token that decodes to a path, a shape or a secret value is replaced whole", () => {
    const r = createRedactor(["my/secret:value"]);
    expect(r.text("GET /search?q=%2Fhome%2Falice%2Fnotes ok")).toBe(`GET ${REDACTED_SECRET} ok`);
    expect(r.text("GET /?k=sk-proj-%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41 ok")).toBe(`GET ${REDACTED_SECRET} ok`);
    expect(r.text("token=my%2Fsecret%3Avalue")).toBe(REDACTED_SECRET);
    // harmless escapes stay
    expect(r.text("GET /?q=hello%20world 100%zz")).toBe("GET /?q=hello%20world 100%zz");
  });

  test("a long token without an escape next to a `%` elsewhere is scanned once (no quadratic rescans)", () => {
    // A participant printing a 1 MiB base64-like blob in text that also holds a `%` (a report's
    // CSS `100%`, a progress bar) must not stall the writer: each token is looked at once.
    const r = createRedactor(["my/secret:value"]);
    const blob = "a".repeat(1 << 20);
    const text = `width: 100%; ${blob} GET /?t=my%2Fsecret%3Avalue done`;
    expect(r.text(text)).toBe(`width: 100%; ${blob} GET ${REDACTED_SECRET} done`);
    const tokenWithEscape = `${"b".repeat(1 << 20)}=my%2Fsecret%3Avalue`;
    expect(r.text(`x ${tokenWithEscape} y`)).toBe(`x ${REDACTED_SECRET} y`);
  });
});

describe("truncation comes last", () => {
  test("tail keeps the end with an ellipsis, and (no output) when empty", () => {
    expect(tail("", 10)).toBe("(no output)");
    expect(tail("abcdef", 10)).toBe("abcdef");
    expect(tail("0123456789abcdef", 5)).toBe("…cdef");
  });

  test("a secret cut by the tail boundary is still fully scrubbed", () => {
    const secret = "zzzz-secret-value-9876";
    const text = `${"x".repeat(50)}${secret}`;
    // Truncating first would leave a fragment of the secret that no longer matches it.
    const out = redact(text, [secret], { tailChars: 10 });
    expect(out).toBe(`…${REDACTED_SECRET.slice(-9)}`);
    expect(out).not.toContain("9876");
  });
});

describe("safe cuts of a stream", () => {
  const r = createRedactor(["zq9-canary-7731-secret", "open sesame 42"]);
  test("cuts only at whitespace, at or before the desired offset", () => {
    expect(r.safeCut("alpha beta gamma", 16)).toBe(11);
    expect(r.safeCut("alpha beta\ngamma", 11)).toBe(11);
    expect(r.safeCut("nowhitespaceatall", 17)).toBe(0);
  });
  test("holds back a tail that may grow into a literal secret, even across spaces", () => {
    expect(r.safeCut("ok zq9-can", 10)).toBe(3);
    expect(r.safeCut("ok open ", 8)).toBe(3);
    expect(r.safeCut("ok open sesame 42 done ", 23)).toBe(23);
  });
  test("holds back open shapes: a growing key, a bearer token, an unfinished PEM block", () => {
    const key = `sk-proj-${rep("Ab3", 10)}`;
    expect(r.safeCut(`x ${key}`, 2 + key.length)).toBe(2);
    expect(r.safeCut("auth: Bearer ", 13)).toBe(6);
    expect(r.safeCut(`auth: Bearer ${rep("t", 30)} `, 44)).toBe(44);
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n";
    expect(r.safeCut(`a\n${pem}`, 2 + pem.length)).toBe(2);
    expect(r.safeCut(`a\n${pem}-----END RSA PRIVATE KEY-----\n`, 2 + pem.length + 30)).toBe(2 + pem.length + 30);
  });
  test("never inside a match, even one containing whitespace", () => {
    const t = "say open sesame 42 now";
    expect(r.safeCut(t, 9)).toBe(4); // "say open |sesame" would split the secret
  });
});

describe("matchesOf", () => {
  test("finds what matchAll finds, in order, and leaves the pattern's lastIndex at 0", () => {
    const re = /a+|(?=b)/g;
    const text = "aab xa b aaa";
    const got = matchesOf(re, text)?.map((m) => [m.index, m[0]]);
    const want = [...text.matchAll(/a+|(?=b)/g)].map((m) => [m.index, m[0]]);
    expect(got).toEqual(want);
    expect(re.lastIndex).toBe(0);
  });

  test("stops at the limit and answers null when nothing matches", () => {
    const re = /\d/g;
    expect(matchesOf(re, "1 2 3 4", 2)?.map((m) => m[0])).toEqual(["1", "2"]);
    expect(re.lastIndex).toBe(0);
    expect(matchesOf(re, "none")).toBeNull();
  });

  test("findSensitive still reports every shape of a text, after earlier calls on other texts", () => {
    const key = `sk-proj-${"A1b2C3d4".repeat(4)}`;
    expect(findSensitive(`x ${key} y`).map((f) => f.shape)).toContain("openai-key");
    expect(findSensitive("clean text")).toEqual([]);
    expect(findSensitive(`${key} and /home/alice/notes.txt`).length).toBeGreaterThanOrEqual(2);
  });
});
