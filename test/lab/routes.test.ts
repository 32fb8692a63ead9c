/**
 * Route-level rules: fields that cannot act on a route are rejected (invariant 6), the
 * cross-validation of each route (the upstream rules, adapted to our routes),
 * normalisation, warnings for accepted-but-unconsumed fields, and the routing predicates.
 */
import { describe, expect, test } from "bun:test";
import { listActors } from "../../src/actor-registry/registry.ts";
import {
  DEVICE_PRESETS,
  isBrowserLab,
  isTerminalLab,
  labDevices,
  labSeats,
  parseLab,
  ROUTE_ACTOR_TYPES,
  resolveLabMode,
  routesToBrowserApp,
  routesToComputerUse,
  routesToScriptedBrowser,
  routesToTerminalProduct,
  selectLabBackend,
} from "../../src/lab/index.ts";
import { accept, browserBase, COMMITTED_LABS, codexBase, cuaBase, labText, reject, terminalBase, toYaml } from "./fixtures.ts";

const y = toYaml;

describe("wrong-route fields are rejected, naming the field and the route it acts on", () => {
  const cases: [string, () => Record<string, any>, RegExp][] = [
    [
      "appUrl on terminal-product",
      () => {
        const l = terminalBase();
        l.subject.appUrl = "http://127.0.0.1:1/";
        return l;
      },
      /subject\.appUrl only acts on the browser route \(subject\.source app-url\); remove it$/,
    ],
    [
      "serve on terminal-product",
      () => {
        const l = terminalBase();
        l.subject.serve = { command: "x" };
        return l;
      },
      /subject\.serve only acts on the browser route/,
    ],
    [
      "product on app-url",
      () => {
        const l = browserBase();
        l.subject.product = { name: "jq" };
        return l;
      },
      /subject\.product only acts on the terminal route \(subject\.source terminal-product\)/,
    ],
    [
      "steps on codex-exec",
      () => {
        const l = codexBase();
        l.actors[0].steps = [{ run: "ls" }];
        return l;
      },
      /actors\[0\]\.steps only acts on a scripted-terminal participant/,
    ],
    [
      "steps on openai-computer-use",
      () => {
        const l = cuaBase();
        l.actors[0].steps = [{ open: "/" }];
        return l;
      },
      /actors\[0\]\.steps only acts on a scripted-browser participant/,
    ],
    [
      "model on scripted-terminal",
      () => {
        const l = terminalBase();
        l.actors[0].model = "gpt-5";
        return l;
      },
      /actors\[0\]\.model cannot act on a scripted participant: it runs no model/,
    ],
    [
      "reasoningEffort on scripted-browser",
      () => {
        const l = browserBase();
        l.actors[0].reasoningEffort = "low";
        return l;
      },
      /actors\[0\]\.reasoningEffort cannot act on a scripted participant/,
    ],
    [
      "terminal block on browser",
      () => {
        const l = browserBase();
        l.execution = { terminal: { transport: "exec-stream" } };
        return l;
      },
      /execution\.terminal only acts on the terminal route/,
    ],
    [
      "network on browser",
      () => {
        const l = browserBase();
        l.execution = { network: "none" };
        return l;
      },
      /execution\.network only acts on the terminal route/,
    ],
    [
      "runtime on browser",
      () => {
        const l = cuaBase();
        l.execution = { runtime: { version: "1.0.0" } };
        return l;
      },
      /execution\.runtime only acts on the terminal route/,
    ],
    [
      "image on browser",
      () => {
        const l = browserBase();
        l.execution = { image: "x" };
        return l;
      },
      /execution\.image only acts on the terminal route/,
    ],
    [
      "desktop on terminal",
      () => {
        const l = terminalBase();
        l.execution = { desktop: {} };
        return l;
      },
      /execution\.desktop only acts on the browser route/,
    ],
    [
      "shell check on a browser task",
      () => {
        const l = browserBase();
        l.actors[0].tasks = [{ id: "a", goal: "g", check: { run: "true" } }];
        return l;
      },
      /actors\[0\]\.tasks\[0\]\.check\.run only acts on the terminal route/,
    ],
    [
      "text check on a terminal task",
      () => {
        const l = terminalBase();
        l.actors[0].tasks = [{ id: "a", goal: "g", check: { run: "true", textIncludes: "x" } }];
        return l;
      },
      /actors\[0\]\.tasks\[0\]\.check\.textIncludes only acts on the browser route/,
    ],
    [
      "browser actor on terminal-product",
      () => {
        const l = terminalBase();
        l.actors[0] = { type: "scripted-browser", steps: [{ open: "/" }] };
        return l;
      },
      /actors\[0\]\.type `scripted-browser` cannot act on subject\.source terminal-product: it is a browser participant; use scripted-terminal or codex-exec$/,
    ],
    [
      "terminal actor on app-url",
      () => {
        const l = browserBase();
        l.actors[0] = { type: "codex-exec", mission: "m" };
        return l;
      },
      /actors\[0\]\.type `codex-exec` cannot act on subject\.source app-url: it is a terminal participant/,
    ],
    [
      "browser target on terminal",
      () => {
        const l = terminalBase();
        l.execution = { target: "local" };
        return l;
      },
      /execution\.target `local` cannot act on subject\.source terminal-product; use docker or e2b-terminal$/,
    ],
    [
      "terminal target on browser",
      () => {
        const l = browserBase();
        l.execution = { target: "e2b-terminal" };
        return l;
      },
      /execution\.target `e2b-terminal` cannot act on subject\.source app-url; use local or e2b-desktop$/,
    ],
    [
      "runtime on scripted-terminal",
      () => {
        const l = terminalBase();
        l.execution = { runtime: { version: "0.171.0" } };
        return l;
      },
      /execution\.runtime only acts on a codex-exec participant/,
    ],
    [
      "runtimeAuth on scripted-terminal",
      () => {
        const l = terminalBase();
        l.execution = { runtimeAuth: "openai-env" };
        return l;
      },
      /execution\.runtimeAuth only acts on a codex-exec participant/,
    ],
    [
      "image on e2b-terminal",
      () => {
        const l = codexBase();
        l.execution = { target: "e2b-terminal", image: "debian:bookworm-slim" };
        return l;
      },
      /execution\.image only acts on target docker/,
    ],
    [
      "network on e2b-terminal",
      () => {
        const l = codexBase();
        l.execution = { target: "e2b-terminal", network: "bridge" };
        return l;
      },
      /execution\.network only acts on target docker/,
    ],
    [
      "scripted-browser on e2b-desktop",
      () => {
        const l = browserBase();
        l.execution = { target: "e2b-desktop" };
        return l;
      },
      /execution\.target must be local for a scripted-browser participant/,
    ],
    [
      "serve.command on e2b-desktop",
      () => {
        const l = cuaBase();
        l.execution = { target: "e2b-desktop" };
        l.subject.serve = { command: "npm start" };
        return l;
      },
      /subject\.serve\.command starts a process on this machine, which an E2B desktop cannot reach/,
    ],
    [
      "reference-only top-level key",
      () => {
        const l = terminalBase();
        l.review = { milestones: ["x"] };
        return l;
      },
      /review\.milestones is a reference humanish key that this humanish does not support; remove it$/,
    ],
    [
      "allowPublicTargets",
      () => {
        const l = browserBase();
        l.policies = { allowPublicTargets: true };
        return l;
      },
      /policies\.allowPublicTargets is not supported: the browser route only drives a loopback appUrl/,
    ],
    [
      "execution.caps",
      () => {
        const l = terminalBase();
        l.execution = { caps: { maxUsd: 1 } };
        return l;
      },
      /execution\.caps belongs in scenario\.caps; remove it$/,
    ],
  ];
  for (const [name, make, re] of cases) {
    test(name, () => {
      expect(reject(y(make()))).toMatch(re);
    });
  }

  test("reference sources that humanish does not run", () => {
    for (const s of ["clone", "local-tree", "this-repo", "local-app", "desktop-cli"]) {
      const l = terminalBase();
      l.subject.source = s;
      expect(reject(y(l))).toMatch(
        new RegExp(`subject\\.source \`${s}\` is a reference humanish source this humanish does not run; use terminal-product or app-url$`),
      );
    }
    const l = terminalBase();
    l.subject.source = "terminal-prodcut";
    expect(reject(y(l))).toMatch(/subject\.source `terminal-prodcut` is not a subject source \(did you mean `terminal-product`\?\)/);
  });
});

describe("no silent coercion", () => {
  test('version: 1.10 is the number 1.1, never the string "1.10"', () => {
    const text = `${y(codexBase())}execution:\n  runtime:\n    version: 1.10\n`;
    expect(reject(text)).toMatch(/execution\.runtime\.version expected a string, got the number 1\.10 \(YAML reads it as 1\.1\); quote it: "1\.10"$/);
    const ok = accept(`${y(codexBase())}execution:\n  runtime:\n    version: "0.171.0"\n`);
    expect(isTerminalLab(ok.config) && ok.config.execution.runtime?.version).toBe("0.171.0");
  });
  test("quoted booleans and numbers are refused", () => {
    expect(reject(`${y(terminalBase())}policies:\n  allowGitHubMutation: "false"\n`)).toMatch(
      /policies\.allowGitHubMutation expected a boolean, got the string "false"; write it without quotes/,
    );
    expect(reject(`${y(terminalBase())}scenario:\n  caps:\n    maxUsd: "0"\n`)).toMatch(
      /scenario\.caps\.maxUsd expected a number, got the string "0"; write it without quotes/,
    );
    const l = browserBase();
    l.actors[0].count = "2";
    expect(reject(y(l))).toMatch(/actors\[0\]\.count expected a number, got the string "2"/);
  });
  test("a number is not a string, a string list is not a string", () => {
    const l = terminalBase();
    l.subject.product.name = 7;
    expect(reject(y(l))).toMatch(/subject\.product\.name expected a string, got the number 7; quote it: "7"/);
    const m = terminalBase();
    m.subject.product.install = "apt-get install -y jq";
    expect(reject(y(m))).toMatch(/subject\.product\.install expected a list, got the string "apt-get install -y jq"/);
    const n = terminalBase();
    n.actors[0].steps = [{ run: true }];
    expect(reject(y(n))).toMatch(/actors\[0\]\.steps\[0\]\.run expected a string, got the boolean true; quote it: "true"/);
  });
  test("integers stay integers: fractional exit codes and job counts are refused", () => {
    const l = terminalBase();
    l.actors[0].steps = [{ run: "ls", expectExit: 1.5 }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.steps\[0\]\.expectExit /);
    const m = terminalBase();
    m.scenario = { caps: { maxJobs: 0.5 } };
    expect(reject(y(m))).toMatch(/scenario\.caps\.maxJobs /);
  });
  test("null is not an absent value", () => {
    expect(reject(`${y(terminalBase())}scenario:\n  mode:\n`)).toMatch(/scenario\.mode must be one of "dry-run", "live" \(got an empty value \(null\)\)/);
    expect(reject(`${y(terminalBase())}title:\n`)).toMatch(/title expected a string, got an empty value \(null\)/);
  });
});

describe("cross-validation", () => {
  test("exactly one actor", () => {
    const l = terminalBase();
    l.actors.push({ type: "scripted-terminal", steps: [{ run: "ls" }] });
    expect(reject(y(l))).toMatch(/actors must list exactly one actor \(got 2; only one participant type runs per lab/);
    l.actors = [];
    expect(reject(y(l))).toMatch(/actors must list exactly one actor \(got none\)/);
  });
  test("seats: count 1–16 on every route; count XOR lanes XOR roster", () => {
    for (const base of [terminalBase, browserBase]) {
      const ok = base();
      ok.actors[0].count = 16;
      accept(y(ok));
      const zero = base();
      zero.actors[0].count = 0;
      expect(reject(y(zero))).toMatch(/actors\[0\]\.count must be at least 1/);
      const many = base();
      many.actors[0].count = 17;
      expect(reject(y(many))).toMatch(/actors\[0\]\.count must be at most 16 seats/);
      const both = base();
      both.actors[0].count = 2;
      both.actors[0].lanes = [{ id: "a" }, { id: "b" }];
      expect(reject(y(both))).toMatch(/actors\[0\]\.lanes cannot be combined with count/);
      const dup = base();
      dup.actors[0].lanes = [{ id: "a" }, { id: "a" }];
      expect(reject(y(dup))).toMatch(/actors\[0\]\.lanes\[1\]\.id seat id `a` repeats/);
      const roster = base();
      roster.actors[0].roster = [
        { id: "r", count: 9 },
        { id: "s", count: 8 },
      ];
      expect(reject(y(roster))).toMatch(/actors\[0\]\.roster declares 17 seats; a study runs at most 16/);
      const conc = base();
      conc.execution = { ...(conc.execution ?? {}), concurrency: 0 };
      expect(reject(y(conc))).toMatch(/execution\.concurrency must be at least 1/);
    }
    const dev = browserBase();
    dev.actors[0].lanes = [{ id: "a", device: "phablet" }];
    expect(reject(y(dev))).toMatch(/actors\[0\]\.lanes\[0\]\.device `phablet` is not a device/);
    const tdev = terminalBase();
    tdev.actors[0].lanes = [{ id: "a", device: "desktop" }];
    expect(reject(y(tdev))).toMatch(/actors\[0\]\.lanes\[0\]\.device only acts on the browser route/);
  });
  test("seat ids: p1…pN, lane ids, roster <id>-01..NN; lane devices win over the count-2 pair", () => {
    const t = terminalBase();
    t.actors[0].count = 3;
    expect(labSeats(accept(y(t)).config).map((s) => s.id)).toEqual(["p1", "p2", "p3"]);
    const r = terminalBase();
    r.actors[0].roster = [
      { id: "novice", count: 2, persona: "new" },
      { id: "pro", count: 1 },
    ];
    expect(labSeats(accept(y(r)).config).map((s) => [s.id, s.persona ?? null])).toEqual([
      ["novice-01", "new"],
      ["novice-02", "new"],
      ["pro-01", null],
    ]);
    const b = browserBase();
    b.actors[0].lanes = [{ id: "phone", device: "mobile", instruction: "use the phone" }, { id: "pc" }];
    const c = accept(y(b)).config;
    if (!isBrowserLab(c)) throw new Error("route");
    expect(labDevices(c).map((d) => [d.seat.id, d.name])).toEqual([
      ["phone", "mobile"],
      ["pc", "desktop"],
    ]);
    const three = browserBase();
    three.actors[0].count = 3;
    const c3 = accept(y(three)).config;
    if (!isBrowserLab(c3)) throw new Error("route");
    expect(labDevices(c3).map((d) => d.name)).toEqual(["desktop", "desktop", "desktop"]);
  });
  test("task ids are unique", () => {
    const l = terminalBase();
    l.actors[0].tasks = [
      { id: "a", goal: "g", check: { run: "true" } },
      { id: "a", goal: "h", check: { run: "true" } },
    ];
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[1\]\.id `a` repeats actors\[0\]\.tasks\[0\]\.id/);
  });
  test("a task check needs its command", () => {
    const l = terminalBase();
    l.actors[0].tasks = [
      { id: "a", goal: "g", check: { run: "true" } },
      { id: "b", goal: "h", check: { run: "  " } },
    ];
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[1\]\.check\.run must be a non-empty shell command/);
    l.actors[0].tasks[1].check = { expectExit: 0 };
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[1\]\.check\.run is required \(a string\)/);
  });
  test("network bridge needs install commands (scripted) — the claim must match a mechanism", () => {
    const l = terminalBase();
    l.execution = { network: "bridge" };
    expect(reject(y(l))).toMatch(/execution\.network is bridge but nothing in this lab uses the network/);
    l.subject.product.install = ["apt-get update"];
    expect(isTerminalLab(accept(y(l)).config) && (accept(y(l)).config as any).execution.network).toBe("bridge");
  });
  test("codex-exec cannot run without network; its default is bridge, scripted's is none", () => {
    const c = codexBase();
    expect((accept(y(c)).config as any).execution.network).toBe("bridge");
    c.execution = { network: "none" };
    expect(reject(y(c))).toMatch(/execution\.network is none, but a codex-exec participant must download the Codex CLI/);
    expect((accept(y(terminalBase())).config as any).execution.network).toBe("none");
  });
  test("model-driven actors need a mission or tasks", () => {
    const c = codexBase();
    delete c.actors[0].mission;
    delete c.actors[0].tasks;
    expect(reject(y(c))).toMatch(/actors\[0\] needs a `mission` or `tasks`: the codex-exec participant's brief would be empty/);
    c.actors[0].tasks = [{ id: "a", goal: "g", check: { run: "true" } }];
    accept(y(c));
    const u = cuaBase();
    delete u.actors[0].mission;
    delete u.actors[0].tasks;
    expect(reject(y(u))).toMatch(/computer-use participant's brief would be empty/);
  });
  test("a model participant needs a hidden check in every mode: tasks (or, for computer-use, stopWhen), named in the refusal", () => {
    for (const mode of ["dry-run", "live"]) {
      const c = codexBase();
      delete c.actors[0].tasks;
      c.scenario = { mode };
      expect(reject(y(c))).toMatch(/actors\[0\] has no hidden check: add actors\[0\]\.tasks .*codex-exec participant's own verdict is a claim, never success/);
      const u = cuaBase();
      delete u.actors[0].tasks;
      u.scenario = { mode };
      expect(reject(y(u))).toMatch(/actors\[0\] has no hidden check: add actors\[0\]\.tasks .* or actors\[0\]\.stopWhen/);
      u.actors[0].stopWhen = { any: [{ textIncludes: ["Done"] }] };
      accept(y(u));
    }
    // A scripted participant claims nothing: without tasks it is accepted, and its seats cannot reach the goal.
    const s = terminalBase();
    expect(s.actors[0].tasks).toBeUndefined();
    accept(y(s));
  });
  test("runtime.version is an exact semver", () => {
    for (const v of ["latest", "^0.171.0", "v0.171.0", "0.171", "0.171.0 ", "01.2.3"]) {
      const c = codexBase();
      c.execution = { runtime: { version: v } };
      expect(reject(y(c))).toMatch(/execution\.runtime\.version must be an exact semver/);
    }
    for (const v of ["0.171.0", "1.0.0-alpha.1", "1.2.3+build.5"]) {
      const c = codexBase();
      c.execution = { runtime: { version: v } };
      accept(y(c));
    }
  });
  test("terminal transport and stdin admit only exec-stream / disabled", () => {
    const l = terminalBase();
    l.execution = { terminal: { transport: "pty" } };
    expect(reject(y(l))).toMatch(/execution\.terminal\.transport must be exec-stream \(captured exec output is not an interactive PTY\)/);
    l.execution = { terminal: { stdin: "sent" } };
    expect(reject(y(l))).toMatch(/execution\.terminal\.stdin must be disabled/);
  });
  test("publicSurfaces are http(s) URLs, at least one", () => {
    const l = terminalBase();
    l.subject.product.publicSurfaces = ["jq --help"];
    expect(reject(y(l))).toMatch(/subject\.product\.publicSurfaces\[0\] must be an absolute http\(s\) URL/);
    l.subject.product.publicSurfaces = [];
    expect(reject(y(l))).toMatch(/subject\.product\.publicSurfaces must list at least one public surface URL/);
  });
  test("appUrl is loopback http with an explicit port, spelled plainly", () => {
    const bad = [
      "http://example.com:80/",
      "https://127.0.0.1:443/",
      "http://127.0.0.1/",
      "http://127.1:8080/",
      "http://0x7f000001:8080/",
      "http://[::1]:8080/",
      "http://127.0.0.1.nip.io:8080/",
      "http://user:pw@127.0.0.1:8080/",
      "http://127.0.0.1:0/",
      "http://127.0.0.1:65536/",
      "http://127.0.0.1:80/",
      "http://localhost:1023/",
      "http://127.0.0.1:8080/#frag",
      "http://LOCALHOST:8080/",
      "file:///etc/passwd",
      "http://127.0.0.1:08080/",
      "http://127.0.0.1:8080/a b",
    ];
    for (const u of bad) {
      const l = browserBase();
      l.subject.appUrl = u;
      expect(reject(y(l))).toMatch(/subject\.appUrl /);
    }
    for (const u of ["http://127.0.0.1:8080/", "http://localhost:1024/", "http://127.0.0.1:65535/app/index.html?x=1", "http://localhost:4173"]) {
      const l = browserBase();
      l.subject.appUrl = u;
      accept(y(l));
    }
  });
  test("serve: exactly one of static or command; static roots stay inside the project", () => {
    const l = browserBase();
    l.subject.serve = {};
    expect(reject(y(l))).toMatch(/subject\.serve needs exactly one of `static: \{root\}` or `command`/);
    l.subject.serve = { static: { root: "a" }, command: "b" };
    expect(reject(y(l))).toMatch(/subject\.serve needs exactly one of/);
    for (const root of ["/srv/app", "../other", "a/../../b", "C:/x", "a\\b", ""]) {
      l.subject.serve = { static: { root } };
      expect(reject(y(l))).toMatch(/subject\.serve\.static\.root must be a relative directory inside the project/);
    }
    l.subject.serve = { static: { root: "dist" }, readyTimeoutMs: 1000 };
    expect(reject(y(l))).toMatch(/subject\.serve\.readyTimeoutMs only acts with `command`/);
  });
});

describe("scripted-browser steps", () => {
  const stepLab = (steps: unknown[], count = 1) => {
    const l = browserBase();
    l.actors[0].steps = steps;
    l.actors[0].count = count;
    return y(l);
  };
  test("every verb normalises to its kind", () => {
    const { config } = accept(
      stepLab([
        { open: "/a?b=1" },
        { click: { x: 1, y: 2 } },
        { click: { x: 3.5, y: 4, button: "right" } },
        { type: "héllo wörld" },
        { press: "Enter" },
        { press: ["ctrl", "shift", "t"] },
        { scroll: { scrollY: 240 } },
        { scroll: { x: 5, y: 6, scrollX: -120 } },
        { wait: { ms: 0 } },
        { waitForText: "Done" },
        "screenshot",
        { screenshot: "after-1" },
      ]),
    );
    if (!isBrowserLab(config) || config.actors[0].type !== "scripted-browser") throw new Error("route");
    expect(config.actors[0].steps).toEqual([
      { kind: "open", path: "/a?b=1" },
      { kind: "click", x: 1, y: 2, button: "left" },
      { kind: "click", x: 3.5, y: 4, button: "right" },
      { kind: "type", text: "héllo wörld" },
      { kind: "press", keys: ["Enter"] },
      { kind: "press", keys: ["ctrl", "shift", "t"] },
      { kind: "scroll", scrollX: 0, scrollY: 240 },
      { kind: "scroll", x: 5, y: 6, scrollX: -120, scrollY: 0 },
      { kind: "wait", ms: 0 },
      { kind: "waitForText", text: "Done", timeoutMs: 10_000 },
      { kind: "screenshot" },
      { kind: "screenshot", label: "after-1" },
    ]);
  });
  const bad: [string, unknown[], RegExp][] = [
    ["unknown verb", [{ clik: { x: 1, y: 1 } }], /actors\[0\]\.steps\[0\]\.clik is not a step \(did you mean `click`\?\)/],
    ["two verbs in one step", [{ open: "/", type: "x" }], /actors\[0\]\.steps\[0\] has 2 keys \(open, type\); each step is exactly one action/],
    ["bare verb without value", ["open"], /actors\[0\]\.steps\[0\] `open` needs a value/],
    ["not a step", ["clik"], /`clik` is not a step \(did you mean `click`\?\)/],
    ["a list as a step", [["open", "/"]], /actors\[0\]\.steps\[0\] must be a one-key mapping/],
    ["protocol-relative open", [{ open: "//evil.example/" }], /actors\[0\]\.steps\[0\]\.open must be a path on the app origin/],
    ["absolute URL open", [{ open: "http://evil.example/" }], /actors\[0\]\.steps\[0\]\.open must be a path on the app origin/],
    ["negative click", [{ click: { x: -1, y: 1 } }], /actors\[0\]\.steps\[0\]\.click\.x must be at least 0/],
    ["click without y", [{ click: { x: 1 } }], /actors\[0\]\.steps\[0\]\.click\.y is required \(a number\)/],
    ["click outside desktop", [{ click: { x: 1440, y: 10 } }], /actors\[0\]\.steps\[0\]\.click \(1440, 10\) is outside the desktop frame 1440×950/],
    ["empty type", [{ type: "" }], /actors\[0\]\.steps\[0\]\.type must be non-empty text/],
    ["NUL in type", [{ type: "a\u0000b" }], /actors\[0\]\.steps\[0\]\.type must not contain NUL/],
    ["oversized type", [{ type: "é".repeat(40_000) }], /actors\[0\]\.steps\[0\]\.type must be at most 65536 UTF-8 bytes/],
    ["unknown key name", [{ press: "Hyper" }], /actors\[0\]\.steps\[0\]\.press key `Hyper` is not in the closed key-name list/],
    ["repeated key", [{ press: ["a", "A"] }], /actors\[0\]\.steps\[0\]\.press repeats a key in one chord/],
    ["too many keys", [{ press: Array.from({ length: 17 }, (_, i) => `F${(i % 12) + 1}`) }], /actors\[0\]\.steps\[0\]\.press /],
    ["zero scroll", [{ scroll: { x: 1, y: 1 } }], /actors\[0\]\.steps\[0\]\.scroll needs a non-zero scrollX or scrollY/],
    ["scroll over 100 wheel steps", [{ scroll: { scrollY: 12_001 } }], /actors\[0\]\.steps\[0\]\.scroll is 101 wheel steps; at most 100/],
    ["scroll with x only", [{ scroll: { x: 1, scrollY: 10 } }], /needs both x and y, or neither/],
    ["long wait", [{ wait: { ms: 30_001 } }], /actors\[0\]\.steps\[0\]\.wait\.ms must be at most 30000/],
    ["wait as a bare number", [{ wait: 100 }], /actors\[0\]\.steps\[0\]\.wait expected a mapping, got the number 100/],
    ["bad screenshot label", [{ screenshot: "Has Spaces" }], /actors\[0\]\.steps\[0\]\.screenshot label must be 1–40 of \[a-z0-9-\]/],
    ["no steps", [], /actors\[0\]\.steps must list at least one step/],
  ];
  for (const [name, steps, re] of bad) {
    test(name, () => {
      expect(reject(stepLab(steps))).toMatch(re);
    });
  }
  test("scroll of exactly 100 wheel steps is accepted", () => {
    accept(stepLab([{ scroll: { scrollY: 12_000 } }]));
  });
  test("with count 2 every coordinate must fit the mobile frame too", () => {
    accept(stepLab([{ click: { x: 413, y: 895 } }], 2));
    expect(reject(stepLab([{ click: { x: 414, y: 10 } }], 2))).toMatch(
      /is outside the mobile frame 414×896 \(count 2 runs the same steps on desktop and mobile\)/,
    );
    expect(reject(stepLab([{ scroll: { x: 10, y: 900, scrollY: 120 } }], 2))).toMatch(
      /actors\[0\]\.steps\[0\]\.scroll \(10, 900\) is outside the mobile frame/,
    );
  });
  test("browser checks need a condition; urlPathEquals is a path", () => {
    const l = browserBase();
    l.actors[0].tasks = [{ id: "a", goal: "g", check: {} }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[0\]\.check needs at least one condition/);
    l.actors[0].tasks = [{ id: "a", goal: "g", check: { urlPathEquals: "done" } }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[0\]\.check\.urlPathEquals must be a path starting with a single `\/`/);
    l.actors[0].tasks = [{ id: "a", goal: "g", check: { textIncludes: [] } }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.tasks\[0\]\.check\.textIncludes /);
    l.actors[0].tasks = [{ id: "a", goal: "g", check: { textIncludes: "one", textExcludes: ["two", "three"] } }];
    const { config } = accept(y(l));
    expect(config.actors[0].tasks?.[0]?.check).toEqual({ textIncludes: ["one"], textExcludes: ["two", "three"] });
  });
});

describe("normalisation and defaults", () => {
  test("terminal defaults", () => {
    const { config } = accept(y(terminalBase()));
    if (!isTerminalLab(config)) throw new Error("route");
    expect(config.scenario).toEqual({ mode: "dry-run" });
    expect(config.execution).toEqual({ target: "docker", terminal: { transport: "exec-stream", stdin: "disabled" }, network: "none" });
    expect(config.policies).toEqual({
      allowPrivateRepoAccess: false,
      allowProviderCredentials: false,
      allowPaymentCredentials: false,
      allowGitHubMutation: false,
    });
  });
  test("terminal check expectExit defaults to 0", () => {
    const l = terminalBase();
    l.actors[0].tasks = [
      { id: "a", goal: "g", check: { run: "true" } },
      { id: "b", goal: "g", check: { run: "false", expectExit: 1 } },
    ];
    const { config } = accept(y(l));
    expect(config.actors[0].tasks?.map((t) => t.check)).toEqual([
      { run: "true", expectExit: 0 },
      { run: "false", expectExit: 1 },
    ]);
  });
  test("browser defaults and devices", () => {
    const { config } = accept(y(browserBase()));
    if (!isBrowserLab(config)) throw new Error("route");
    expect(config.execution).toEqual({ target: "local" });
    expect(config.actors[0].count).toBe(1);
    expect(labDevices(config)).toEqual([{ seat: { id: "p1", index: 0 }, name: "desktop", preset: DEVICE_PRESETS.desktop }]);
    const two = browserBase();
    two.actors[0].count = 2;
    const c2 = accept(y(two)).config;
    if (!isBrowserLab(c2)) throw new Error("route");
    expect(labDevices(c2).map((d) => [d.name, d.preset.width, d.preset.height])).toEqual([
      ["desktop", 1440, 950],
      ["mobile", 414, 896],
    ]);
  });
  test("mode: dry-run unless the lab says live; an explicit override wins", () => {
    const dry = accept(y(terminalBase())).config;
    expect(resolveLabMode(dry)).toBe("dry-run");
    expect(resolveLabMode(dry, "live")).toBe("live");
    const live = terminalBase();
    live.scenario = { mode: "live" };
    const lc = accept(y(live)).config;
    expect(resolveLabMode(lc)).toBe("live");
    expect(resolveLabMode(lc, "dry-run")).toBe("dry-run");
    const weird = terminalBase();
    weird.scenario = { mode: "Live" };
    expect(reject(y(weird))).toMatch(/scenario\.mode must be one of "dry-run", "live" \(got the string "Live"\)/);
  });
});

describe("warnings for accepted fields that are not consumed", () => {
  test("committed labs have no warnings", () => {
    for (const id of COMMITTED_LABS) {
      const r = parseLab(labText(id));
      expect(r.ok && r.warnings).toEqual([]);
    }
  });
  test("execution.timeoutMs on the terminal route", () => {
    const l = terminalBase();
    l.execution = { timeoutMs: 1000 };
    expect(accept(y(l)).warnings).toEqual([
      { code: "HUMANISH_LAB_FIELD_INERT", path: "execution.timeoutMs", message: expect.stringContaining("not consumed on the terminal route") },
    ]);
  });
  test("persona and mission on scripted participants", () => {
    const l = browserBase();
    l.actors[0].persona = "p";
    l.actors[0].mission = "m";
    expect(accept(y(l)).warnings.map((w) => [w.code, w.path])).toEqual([
      ["HUMANISH_LAB_FIELD_INERT", "actors[0].persona"],
      ["HUMANISH_LAB_FIELD_INERT", "actors[0].mission"],
    ]);
    const c = codexBase();
    c.actors[0].persona = "p";
    expect(accept(y(c)).warnings).toEqual([]);
  });
  test("maxJobs on the browser route", () => {
    const l = cuaBase();
    l.scenario = { caps: { maxJobs: 1 } };
    expect(accept(y(l)).warnings.map((w) => w.path)).toEqual(["scenario.caps.maxJobs"]);
  });
  test("policies set to true are declarations only", () => {
    const l = terminalBase();
    l.policies = { allowProviderCredentials: true };
    expect(accept(y(l)).warnings).toEqual([
      { code: "HUMANISH_LAB_POLICY_DECLARATION_ONLY", path: "policies.allowProviderCredentials", message: expect.stringContaining("declaration only") },
    ]);
  });
  test("e2b targets parse and route, with no dry-run-only warning", () => {
    const c = codexBase();
    c.execution = { target: "e2b-terminal" };
    const r = accept(y(c));
    expect(selectLabBackend(r.config)).toBe("terminal");
    // e2b-terminal runs live: no dry-run-only warning.
    expect(r.warnings).toEqual([]);
    // e2b-desktop runs live too, on a public https URL (or an app served inside the desktop).
    const u = cuaBase();
    u.execution = { target: "e2b-desktop" };
    u.subject.appUrl = "https://demo.example.com/";
    const s = accept(y(u));
    expect(selectLabBackend(s.config)).toBe("browser");
    expect(s.warnings).toEqual([]);
  });
});

describe("routing predicates", () => {
  test("committed labs route as intended", () => {
    const route = (id: string) => {
      const r = parseLab(labText(id));
      if (!r.ok) throw new Error(r.error.message);
      return [
        selectLabBackend(r.config),
        routesToTerminalProduct(r.config),
        routesToBrowserApp(r.config),
        routesToScriptedBrowser(r.config),
        routesToComputerUse(r.config),
      ];
    };
    expect(route("jq-first-contact")).toEqual(["terminal", true, false, false, false]);
    expect(route("codex-first-contact")).toEqual(["terminal", true, false, false, false]);
    expect(route("todomvc-first-run")).toEqual(["browser", false, true, true, false]);
    expect(selectLabBackend(accept(y(cuaBase())).config)).toBe("browser");
    expect(routesToComputerUse(accept(y(cuaBase())).config)).toBe(true);
  });
  test("a terminal-product source routes to terminal even with an actor the registry does not serve there", () => {
    const raw = { subject: { source: "terminal-product" }, actors: [{ type: "mystery" }] };
    expect(routesToTerminalProduct(raw)).toBe(false);
    expect(selectLabBackend(raw)).toBe("terminal");
  });
  test("the lab's actor table agrees with the actor registry's lanes", () => {
    const lanes = new Map(listActors().map((a) => [a.type, a.capabilities.lanes]));
    for (const t of ROUTE_ACTOR_TYPES.terminal) expect(lanes.get(t)).toContain("terminal");
    for (const t of ROUTE_ACTOR_TYPES.browser) expect(lanes.get(t)!.some((l) => l === "scripted-browser" || l === "computer-use")).toBe(true);
  });
});

describe("the brief gets goals, never checks", () => {
  test("numbered goals only", async () => {
    const { taskGoalsBrief } = await import("../../src/lab/index.ts");
    const r = parseLab(labText("jq-first-contact"));
    if (!r.ok) throw new Error(r.error.message);
    const brief = taskGoalsBrief(r.config)!;
    expect(brief.split("\n")).toEqual([
      "Work through these in order:",
      "1. Pretty-print orders.json into a new file pretty.json.",
      '2. Write the ids of the orders whose status is "open" to open-ids.txt, one per line, without quotes.',
      "3. Write the total amount of the open orders to open-total.txt.",
      "4. Write a JSON object that maps each customer to their number of orders to per-customer.json.",
    ]);
    for (const t of r.config.actors[0].tasks ?? []) expect(brief).not.toContain((t.check as { run: string }).run);
    expect(taskGoalsBrief(accept(y(terminalBase())).config)).toBeUndefined();
  });
});

describe("line endings and byte-order marks", () => {
  test("CRLF and a leading BOM parse to the same config", () => {
    const text = labText("todomvc-first-run");
    const a = parseLab(text);
    const b = parseLab(text.replace(/\n/g, "\r\n"));
    const c = parseLab(`\uFEFF${text}`);
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (a.ok && b.ok && c.ok) {
      expect(b.config).toEqual(a.config);
      expect(c.config).toEqual(a.config);
    }
  });
  test("CRLF errors still carry the right line", () => {
    const l = terminalBase();
    l.scenario = { mode: "liv" };
    const text = y(l).replace(/\n/g, "\r\n");
    const line = text.split("\r\n").findIndex((s) => s.includes("mode: liv")) + 1;
    expect(reject(text)).toStartWith(`t.yaml:${line}:`);
  });
});

describe("defaults are fresh per parse", () => {
  test("mutating one parsed config does not leak into the next", () => {
    const a = accept(y(terminalBase())).config as any;
    a.execution.terminal.stdin = "mutated";
    a.policies.allowGitHubMutation = true;
    a.scenario.mode = "live";
    const b = accept(y(terminalBase())).config as any;
    expect(b.execution.terminal.stdin).toBe("disabled");
    expect(b.policies.allowGitHubMutation).toBe(false);
    expect(b.scenario.mode).toBe("dry-run");
  });
});

describe("a typo in a key the route depends on is reported as the typo, not as a missing key", () => {
  test("top level, subject.source and actors[0].type", () => {
    const a = terminalBase();
    a.actor = a.actors;
    delete a.actors;
    expect(reject(y(a))).toMatch(/^t\.yaml:\d+:1: actor is not a known key \(did you mean `actors`\?/);
    const b = terminalBase();
    b.subject.sorce = b.subject.source;
    delete b.subject.source;
    expect(reject(y(b))).toMatch(/subject\.sorce is not a known key \(did you mean `source`\?/);
    const c = browserBase();
    c.actors[0].typ = c.actors[0].type;
    delete c.actors[0].type;
    expect(reject(y(c))).toMatch(/actors\[0\]\.typ is not a known key \(did you mean `type`\?/);
    const d = terminalBase();
    delete d.subject;
    d.subjet = {};
    expect(reject(y(d))).toMatch(/subjet is not a known key \(did you mean `subject`\?/);
  });
  test("missing required keys still say so", () => {
    const a = terminalBase();
    delete a.actors;
    expect(reject(y(a))).toMatch(/actors is required: a list with exactly one actor \(scripted-terminal or codex-exec\)/);
    const b = terminalBase();
    delete b.subject.source;
    expect(reject(y(b))).toMatch(/subject\.source is required: terminal-product or app-url/);
    const c = terminalBase();
    delete c.actors[0].type;
    expect(reject(y(c))).toMatch(/actors\[0\]\.type is required: one of scripted-terminal, codex-exec/);
    const d = terminalBase();
    d.actors[0].type = 7;
    expect(reject(y(d))).toMatch(/actors\[0\]\.type must be a string: one of scripted-terminal, codex-exec/);
    const e = terminalBase();
    delete e.id;
    expect(reject(y(e))).toMatch(/^t\.yaml:1:1: id is required \(a string\)/);
  });
});

describe("scripted-terminal steps", () => {
  test("expectExit defaults to 0 and is kept when given", () => {
    const l = terminalBase();
    l.actors[0].steps = [{ run: "ls" }, { run: "grep nothing /dev/null", expectExit: 1 }];
    const { config } = accept(y(l));
    if (!isTerminalLab(config) || config.actors[0].type !== "scripted-terminal") throw new Error("route");
    expect(config.actors[0].steps).toEqual([
      { run: "ls", expectExit: 0 },
      { run: "grep nothing /dev/null", expectExit: 1 },
    ]);
  });
  test("exit codes are 0–255", () => {
    const l = terminalBase();
    l.actors[0].steps = [{ run: "ls", expectExit: 256 }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.steps\[0\]\.expectExit must be at most 255/);
    l.actors[0].steps = [{ run: "ls", expectExit: -1 }];
    expect(reject(y(l))).toMatch(/actors\[0\]\.steps\[0\]\.expectExit must be at least 0/);
  });
});
