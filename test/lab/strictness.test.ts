/**
 * Strictness, exhaustively: an unknown key at EVERY mapping of every committed lab and of a
 * maximal lab per actor type is rejected with its field path and the nearest known key; a
 * wrong-typed value at EVERY scalar is rejected with its field path; nothing is coerced.
 */
import { describe, expect, test } from "bun:test";
import { parseLab } from "../../src/lab/index.ts";
import { formatPath } from "../../src/lab/parse.ts";
import { browserBase, COMMITTED_LABS, codexBase, cuaBase, labObject, terminalBase, toYaml } from "./fixtures.ts";

function maximalTerminal(): Record<string, any> {
  const lab = terminalBase();
  lab.title = "T";
  lab.description = "D.";
  lab.subject.product.install = ["apt-get install -y jq", "echo '{}' > a.json"];
  lab.actors[0].count = 1;
  lab.actors[0].tasks = [{ id: "a", goal: "Do a.", check: { run: "test -f a.json", expectExit: 0 } }];
  lab.actors[0].steps = [{ run: "jq --help", expectExit: 0 }, { run: "ls" }];
  lab.execution = { target: "docker", terminal: { transport: "exec-stream", stdin: "disabled" }, image: "debian:bookworm-slim", network: "bridge" };
  lab.scenario = { mode: "live", caps: { maxUsd: 0, maxJobs: 0, maxMinutes: 5 } };
  lab.policies = { allowPrivateRepoAccess: false, allowProviderCredentials: false, allowPaymentCredentials: false, allowGitHubMutation: false };
  return lab;
}

function maximalCodex(): Record<string, any> {
  const lab = codexBase();
  lab.actors[0] = {
    type: "codex-exec",
    count: 1,
    persona: "p",
    mission: "m",
    model: "gpt-5",
    reasoningEffort: "low",
    tasks: [{ id: "a", goal: "g", check: { run: "true" } }],
  };
  lab.execution = {
    target: "docker",
    runtimeAuth: "openai-env",
    runtime: { version: "0.171.0" },
    network: "bridge",
    terminal: { transport: "exec-stream", stdin: "disabled" },
  };
  lab.scenario = { mode: "dry-run", caps: { maxUsd: 1, maxJobs: 1, maxMinutes: 10 } };
  return lab;
}

function maximalBrowser(): Record<string, any> {
  const lab = browserBase();
  lab.subject.serve = { static: { root: "node_modules/todomvc/examples/vanillajs" } };
  lab.actors[0] = {
    type: "scripted-browser",
    count: 2,
    tasks: [{ id: "a", goal: "g", check: { textIncludes: ["x", "y"], textExcludes: "z", urlIncludes: "/a", urlPathEquals: "/a" } }],
    steps: [
      { open: "/" },
      { click: { x: 10, y: 20, button: "left" } },
      { type: "hello" },
      { press: ["ctrl", "a"] },
      { press: "Enter" },
      { scroll: { x: 100, y: 100, scrollX: 0, scrollY: 240 } },
      { wait: { ms: 100 } },
      { waitForText: "hi" },
      { screenshot: "shot-1" },
      "screenshot",
    ],
  };
  lab.execution = { target: "local" };
  lab.scenario = { mode: "live", caps: { maxUsd: 0, maxMinutes: 5 } };
  lab.policies = { allowGitHubMutation: false };
  return lab;
}

function maximalCua(): Record<string, any> {
  const lab = cuaBase();
  lab.subject.serve = { command: "python3 -m http.server $PORT", readyTimeoutMs: 5000 };
  lab.actors[0] = {
    type: "openai-computer-use",
    count: 1,
    persona: "p",
    mission: "m",
    model: "computer-use-preview",
    reasoningEffort: "medium",
    tasks: [{ id: "a", goal: "g", check: { urlPathEquals: "/done" } }],
  };
  lab.execution = { target: "local", timeoutMs: 60000 };
  return lab;
}

const SUBJECTS: [string, () => Record<string, any>][] = [
  ...COMMITTED_LABS.map((id) => [id, () => labObject(id)] as [string, () => Record<string, any>]),
  ["maximal scripted-terminal", maximalTerminal],
  ["maximal codex-exec", maximalCodex],
  ["maximal scripted-browser", maximalBrowser],
  ["maximal openai-computer-use", maximalCua],
];

type Path = (string | number)[];

function walk(v: unknown, path: Path, out: { maps: Path[]; leaves: Path[] }): void {
  if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i], out));
  else if (v !== null && typeof v === "object") {
    out.maps.push(path);
    for (const [k, x] of Object.entries(v)) walk(x, [...path, k], out);
  } else out.leaves.push(path);
}

function getAt(obj: any, path: Path): any {
  return path.reduce((o, k) => o[k], obj);
}

function isStepMapping(lab: Record<string, any>, path: Path): boolean {
  return lab.subject.source === "app-url" && path.length === 4 && path[0] === "actors" && path[2] === "steps";
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("every committed and maximal lab parses", () => {
  for (const [name, make] of SUBJECTS) {
    test(name, () => {
      const r = parseLab(toYaml(make()));
      if (!r.ok) throw new Error(r.error.message);
      expect(r.ok).toBe(true);
    });
  }
});

describe("an unknown key at every nesting level names its path and the nearest known key", () => {
  for (const [name, make] of SUBJECTS) {
    test(name, () => {
      const { maps } = (() => {
        const o = { maps: [] as Path[], leaves: [] as Path[] };
        walk(make(), [], o);
        return o;
      })();
      expect(maps.length).toBeGreaterThan(5);
      for (const path of maps) {
        const base = make();
        const known = Object.keys(getAt(base, path));
        for (const k of known) {
          const lab = make();
          const typo = k + k.slice(-1);
          getAt(lab, path)[typo] = getAt(lab, path)[k];
          const r = parseLab(toYaml(lab), { source: "t.yaml" });
          if (r.ok) throw new Error(`accepted unknown key ${formatPath(path, typo)}`);
          expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
          if (isStepMapping(base, path)) {
            expect(r.error.message).toMatch(new RegExp(`^t\\.yaml:\\d+:\\d+: ${escape(formatPath(path))} has 2 keys`));
          } else {
            expect(r.error.message).toMatch(
              new RegExp(`^t\\.yaml:\\d+:\\d+: ${escape(formatPath(path, typo))} is not a known key \\(did you mean \`${escape(k)}\`\\?`),
            );
          }
        }
      }
    });
  }

  test("the reported line is the line of the unknown key", () => {
    const lab = maximalTerminal();
    lab.actors[0].tasks[0].check.rn = "x";
    const text = toYaml(lab);
    const line = text.split("\n").findIndex((l) => /^\s*rn: x$/.test(l)) + 1;
    const r = parseLab(text, { source: "t.yaml" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toStartWith(`t.yaml:${line}:`);
  });

  test("a key with no near neighbour lists the known keys", () => {
    const lab = terminalBase();
    lab.scenario = { zzzzzzzz: 1 };
    const r = parseLab(toYaml(lab), { source: "t.yaml" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/scenario\.zzzzzzzz is not a known key \(known keys: mode, caps\)$/);
  });

  test("a typo is reported before the 'required' problem it causes", () => {
    const lab = terminalBase();
    lab.actors[0].stepz = lab.actors[0].steps;
    delete lab.actors[0].steps;
    const r = parseLab(toYaml(lab), { source: "t.yaml" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/actors\[0\]\.stepz is not a known key \(did you mean `steps`\?.*\(and 1 more problem\)$/);
  });
});

describe("a wrong-typed value at every scalar names its path; nothing is coerced", () => {
  for (const [name, make] of SUBJECTS) {
    test(name, () => {
      const o = { maps: [] as Path[], leaves: [] as Path[] };
      walk(make(), [], o);
      expect(o.leaves.length).toBeGreaterThan(5);
      for (const path of o.leaves) {
        const orig = getAt(make(), path);
        const wrong = typeof orig === "string" ? 12345 : typeof orig === "number" ? String(orig) : typeof orig === "boolean" ? String(orig) : "x";
        const lab = make();
        const parent = getAt(lab, path.slice(0, -1));
        parent[path[path.length - 1]!] = wrong;
        const r = parseLab(toYaml(lab), { source: "t.yaml" });
        if (r.ok) throw new Error(`accepted ${JSON.stringify(wrong)} at ${formatPath(path)}`);
        const last = path[path.length - 1];
        const named = [formatPath(path)];
        if (typeof last === "number") named.push(formatPath(path.slice(0, -1)));
        if (!named.some((p) => r.error.message.includes(` ${p} `))) throw new Error(`message does not name ${named.join(" or ")}: ${r.error.message}`);
        expect(r.error.message).toMatch(/^t\.yaml:\d+:\d+: /);
      }
    });
  }
});
