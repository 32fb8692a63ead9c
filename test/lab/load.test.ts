/**
 * Resolution: search order, explicit paths, containment, the
 * embedded labs (`default` = jq) and listing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHumanishError } from "../../src/errors.ts";
import { EMBEDDED_LABS, findEmbeddedLab, labSearchPaths, listLabs, loadLab, looksLikeLabPath } from "../../src/lab/index.ts";
import { COMMITTED_LABS, LABS_DIR, labText, terminalBase, toYaml } from "./fixtures.ts";

const dirs: string[] = [];
function project(): string {
  const d = mkdtempSync(join(tmpdir(), "humanish-lab-test-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function labWithTitle(id: string, title: string): string {
  const l = terminalBase();
  l.id = id;
  l.title = title;
  return toYaml(l);
}

function put(root: string, rel: string, text: string): string {
  const p = join(root, rel);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
  return p;
}

async function thrown(p: Promise<unknown>): Promise<{ code: string; message: string; next?: string }> {
  try {
    await p;
  } catch (e) {
    if (!isHumanishError(e)) throw e;
    return { code: e.code, message: e.message, ...(e.next ? { next: e.next } : {}) };
  }
  throw new Error("expected a HumanishError");
}

describe("search order: committed .yaml, .yml, .humanish/labs, .humanish/local/labs, embedded", () => {
  const places = [
    "humanish/labs/x.yaml",
    "humanish/labs/x.yml",
    ".humanish/labs/x.yaml",
    ".humanish/labs/x.yml",
    ".humanish/local/labs/x.yaml",
    ".humanish/local/labs/x.yml",
  ];
  test("each location wins over every later one", async () => {
    for (let i = 0; i < places.length; i++) {
      const root = project();
      for (let j = i; j < places.length; j++) put(root, places[j]!, labWithTitle("x", `from ${places[j]}`));
      const loaded = await loadLab("x", root);
      expect(loaded.config.title).toBe(`from ${places[i]}`);
      expect(loaded.ref).toBe(places[i]!);
      expect(loaded.path).toBe(join(root, places[i]!));
      expect(loaded.origin).toBe(i < 2 ? "committed" : "ignored");
      expect(loaded.sha256).toBe(createHash("sha256").update(loaded.text).digest("hex"));
      expect(loaded.warnings).toEqual([]);
    }
  });
  test("a project lab shadows an embedded lab of the same id", async () => {
    const root = project();
    put(root, ".humanish/local/labs/jq-first-contact.yaml", labWithTitle("jq-first-contact", "mine"));
    expect((await loadLab("jq-first-contact", root)).config.title).toBe("mine");
  });
  test("labSearchPaths lists the six candidates in order", () => {
    expect(labSearchPaths("x", "/p")).toEqual(places.map((p) => `/p/${p}`));
  });
});

describe("embedded labs", () => {
  test("`default` is the jq lab, with no files in the project", async () => {
    const root = project();
    const loaded = await loadLab("default", root);
    expect(loaded.config.id).toBe("jq-first-contact");
    expect(loaded.ref).toBe("embedded:jq-first-contact");
    expect(loaded.origin).toBe("embedded");
    expect(loaded.path).toBeUndefined();
    expect(loaded.text).toBe(labText("jq-first-contact"));
    expect(loaded.warnings).toEqual([]);
  });
  test("every committed lab is embedded byte for byte and resolves by id", async () => {
    const files = readdirSync(LABS_DIR)
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => f.replace(/\.ya?ml$/, ""))
      .sort();
    expect(files).toEqual([...COMMITTED_LABS].sort());
    expect(EMBEDDED_LABS.map((l) => l.id).sort()).toEqual(files);
    const root = project();
    for (const id of COMMITTED_LABS) {
      expect(findEmbeddedLab(id)!.text).toBe(labText(id));
      const loaded = await loadLab(id, root);
      expect(loaded.config.id).toBe(id);
      expect(loaded.sha256).toBe(createHash("sha256").update(labText(id)).digest("hex"));
    }
  });
});

describe("explicit paths", () => {
  test("what looks like a path", () => {
    for (const r of ["a.yaml", "a.yml", "dir/a", "dir\\a", "./a", ".hidden", "/abs/a.yaml"]) expect(looksLikeLabPath(r)).toBe(true);
    for (const r of ["default", "jq-first-contact", "a.b"]) expect(looksLikeLabPath(r)).toBe(false);
  });
  test("relative to the project, absolute anywhere", async () => {
    const root = project();
    put(root, "labs/mine.yaml", labWithTitle("mine", "relative"));
    const rel = await loadLab("labs/mine.yaml", root);
    expect(rel.config.title).toBe("relative");
    expect(rel.ref).toBe("labs/mine.yaml");
    expect(rel.origin).toBe("explicit");
    const elsewhere = project();
    const abs = put(elsewhere, "other.yaml", labWithTitle("other", "absolute"));
    const a = await loadLab(abs, root);
    expect(a.config.title).toBe("absolute");
    expect(a.ref).toBe(abs);
  });
  test("the committed lab files load by path", async () => {
    for (const id of COMMITTED_LABS) {
      const loaded = await loadLab(`labs/${id}.yaml`, join(import.meta.dir, "../.."));
      expect(loaded.config.id).toBe(id);
    }
  });
  test("a missing explicit path is not found; a directory is invalid", async () => {
    const root = project();
    const e = await thrown(loadLab("nope.yaml", root));
    expect(e.code).toBe("HUMANISH_LAB_NOT_FOUND");
    expect(e.message).toBe("no lab file at nope.yaml");
    mkdirSync(join(root, "d.yaml"));
    expect((await thrown(loadLab("d.yaml", root))).message).toBe("d.yaml: is not a regular file");
  });
});

describe("failures", () => {
  test("not found lists every place looked and points at lab list", async () => {
    const root = project();
    const e = await thrown(loadLab("missing-lab", root));
    expect(e.code).toBe("HUMANISH_LAB_NOT_FOUND");
    expect(e.message).toContain(
      "humanish/labs/missing-lab.yaml, humanish/labs/missing-lab.yml, .humanish/labs/missing-lab.yaml, .humanish/labs/missing-lab.yml, .humanish/local/labs/missing-lab.yaml, .humanish/local/labs/missing-lab.yml",
    );
    expect(e.message).toContain(
      "the embedded labs (codex-first-contact, default, jq-first-contact, jq-first-contact-seats, todomvc-computer-use, todomvc-first-run, todomvc-first-run-seats)",
    );
    expect(e.next).toBe("humanish lab list");
  });
  test("an invalid id is not found", async () => {
    const e = await thrown(loadLab("-rf", project()));
    expect(e.code).toBe("HUMANISH_LAB_NOT_FOUND");
  });
  test("an invalid lab throws HUMANISH_LAB_INVALID with the file, line and field", async () => {
    const root = project();
    put(
      root,
      "humanish/labs/bad.yaml",
      'schema: humanish.lab.v2\nid: bad\nsubject:\n  source: terminal-product\n  product: {name: jq, publicSurfaces: ["https://a.b/"], instal: []}\nactors: [{type: scripted-terminal, steps: [{run: ls}]}]\n',
    );
    const e = await thrown(loadLab("bad", root));
    expect(e.code).toBe("HUMANISH_LAB_INVALID");
    expect(e.message).toMatch(/^humanish\/labs\/bad\.yaml:5:57: subject\.product\.instal is not a known key \(did you mean `install`\?/);
    expect(e.next).toContain("humanish lab inspect humanish/labs/bad.yaml");
  });
  test("a symlink that leaves the project is refused", async () => {
    const root = project();
    const outside = put(project(), "evil.yaml", labWithTitle("evil", "outside"));
    mkdirSync(join(root, "humanish/labs"), { recursive: true });
    symlinkSync(outside, join(root, "humanish/labs/evil.yaml"));
    const e = await thrown(loadLab("evil", root));
    expect(e.code).toBe("HUMANISH_LAB_INVALID");
    expect(e.message).toContain("humanish/labs/evil.yaml: is a link that resolves outside the project");
  });
  test("a symlink inside the project is fine", async () => {
    const root = project();
    const inside = put(root, "linked/x.yaml", labWithTitle("x", "linked"));
    mkdirSync(join(root, "humanish/labs"), { recursive: true });
    symlinkSync(inside, join(root, "humanish/labs/x.yaml"));
    expect((await loadLab("x", root)).config.title).toBe("linked");
  });
  test("a hard-linked project lab is refused", async () => {
    const root = project();
    const outside = put(project(), "evil.yaml", labWithTitle("evil", "outside"));
    mkdirSync(join(root, ".humanish/labs"), { recursive: true });
    linkSync(outside, join(root, ".humanish/labs/evil.yaml"));
    const e = await thrown(loadLab("evil", root));
    expect(e.code).toBe("HUMANISH_LAB_INVALID");
    expect(e.message).toContain("has 2 hard links");
  });
  test("non-UTF-8 and oversized files are refused", async () => {
    const root = project();
    put(root, "humanish/labs/latin1.yaml", "");
    writeFileSync(join(root, "humanish/labs/latin1.yaml"), Buffer.from([0x69, 0x64, 0x3a, 0x20, 0xe9, 0x0a]));
    expect((await thrown(loadLab("latin1", root))).message).toBe("humanish/labs/latin1.yaml: is not valid UTF-8");
    put(root, "humanish/labs/big.yaml", "#".repeat(1_048_577));
    expect((await thrown(loadLab("big", root))).message).toMatch(/big\.yaml: is 1048577 bytes; a lab may be at most 1048576 bytes/);
  });
  test("a file whose id differs from its name warns", async () => {
    const root = project();
    put(root, "humanish/labs/alias.yaml", labWithTitle("real-id", "t"));
    const loaded = await loadLab("alias", root);
    expect(loaded.warnings).toEqual([
      { code: "HUMANISH_LAB_ID_MISMATCH", path: "id", message: expect.stringContaining('declares id "real-id" but is resolved by its file name "alias"') },
    ]);
  });
});

describe("listLabs", () => {
  test("project labs in search order, then embedded; errors listed, never thrown; shadowing marked", async () => {
    const root = project();
    put(root, "humanish/labs/a.yaml", labWithTitle("a", "A"));
    put(root, "humanish/labs/a.yml", labWithTitle("a", "A yml"));
    put(root, ".humanish/labs/broken.yaml", "schema: humanish.lab.v2\nid: broken\n");
    put(root, ".humanish/local/labs/jq-first-contact.yaml", labWithTitle("jq-first-contact", "local jq"));
    put(root, "humanish/labs/notes.txt", "ignored");
    const list = await listLabs(root);
    expect(list.map((l) => [l.id, l.origin, l.ref, l.route ?? null, l.shadowedBy ?? null, l.error?.code ?? null])).toEqual([
      ["a", "committed", "humanish/labs/a.yaml", "terminal", null, null],
      ["a", "committed", "humanish/labs/a.yml", "terminal", "humanish/labs/a.yaml", null],
      ["broken", "ignored", ".humanish/labs/broken.yaml", null, null, "HUMANISH_LAB_INVALID"],
      ["jq-first-contact", "ignored", ".humanish/local/labs/jq-first-contact.yaml", "terminal", null, null],
      ["jq-first-contact", "embedded", "embedded:jq-first-contact", "terminal", ".humanish/local/labs/jq-first-contact.yaml", null],
      ["codex-first-contact", "embedded", "embedded:codex-first-contact", "terminal", null, null],
      ["todomvc-first-run", "embedded", "embedded:todomvc-first-run", "browser", null, null],
      ["jq-first-contact-seats", "embedded", "embedded:jq-first-contact-seats", "terminal", null, null],
      ["todomvc-first-run-seats", "embedded", "embedded:todomvc-first-run-seats", "browser", null, null],
      ["todomvc-computer-use", "embedded", "embedded:todomvc-computer-use", "browser", null, null],
    ]);
    expect(list[0]!.title).toBe("A");
    expect(list[2]!.error!.message).toMatch(/^\.humanish\/labs\/broken\.yaml:1:1: .*subject is required/);
    expect(list.find((l) => l.ref === "embedded:jq-first-contact")!.aliases).toEqual(["default"]);
    expect(list.every((l) => l.source === (l.origin === "embedded" ? "embedded" : "project"))).toBe(true);
  });
  test("an empty project lists only the embedded labs, all valid", async () => {
    const list = await listLabs(project());
    expect(list.map((l) => l.id)).toEqual([
      "jq-first-contact",
      "codex-first-contact",
      "todomvc-first-run",
      "jq-first-contact-seats",
      "todomvc-first-run-seats",
      "todomvc-computer-use",
    ]);
    expect(list.every((l) => l.error === undefined && l.title !== undefined && l.description !== undefined)).toBe(true);
  });
});
