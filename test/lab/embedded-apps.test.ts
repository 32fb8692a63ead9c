/**
 * `subject.serve.static.root: "embedded:<app>"`: the closed list of embedded apps is validated by
 * the lab schema (unknown names refused with HUMANISH_LAB_INVALID naming the field), the
 * committed todomvc lab (as committed and as embedded in the binary) uses it, and a
 * project-relative root keeps working.
 */
import { describe, expect, test } from "bun:test";
import { type BrowserLabConfig, EMBEDDED_APP_NAMES, embeddedRootName, findEmbeddedLab, isEmbeddedAppName, parseLab } from "../../src/lab/index.ts";
import { accept, browserBase, labText, reject, toYaml } from "./fixtures.ts";

function withRoot(root: unknown): string {
  const l = browserBase();
  l.subject.serve = { static: { root } };
  return toYaml(l);
}

function staticRoot(text: string): string | undefined {
  return (accept(text).config as BrowserLabConfig).subject.serve?.static?.root;
}

describe("embedded apps in the browser lab schema", () => {
  test("the committed todomvc lab and its embedded copy parse and name embedded:todomvc-vanillajs", () => {
    expect(staticRoot(labText("todomvc-first-run"))).toBe("embedded:todomvc-vanillajs");
    const embedded = findEmbeddedLab("todomvc-first-run");
    expect(embedded?.text).toBe(labText("todomvc-first-run"));
    expect(staticRoot(embedded!.text)).toBe("embedded:todomvc-vanillajs");
  });

  test("every listed embedded app is accepted", () => {
    expect(EMBEDDED_APP_NAMES.length).toBeGreaterThan(0);
    for (const name of EMBEDDED_APP_NAMES) expect(staticRoot(withRoot(`embedded:${name}`))).toBe(`embedded:${name}`);
  });

  test("an unknown embedded app is refused with HUMANISH_LAB_INVALID naming the field and the known apps", () => {
    for (const bad of ["embedded:todomvc-react", "embedded:", "embedded:../todomvc-vanillajs", "embedded:TODOMVC-VANILLAJS", "embedded:todomvc-vanillajs/js"]) {
      const r = parseLab(withRoot(bad), { source: "t.yaml" });
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.error.code).toBe("HUMANISH_LAB_INVALID");
      expect(r.error.message).toContain("subject.serve.static.root");
      expect(r.error.message).toContain(`\`${bad.slice("embedded:".length)}\` is unknown`);
      expect(r.error.message).toContain("`embedded:todomvc-vanillajs`");
    }
  });

  test("a project-relative root still parses; escapes are still refused", () => {
    expect(staticRoot(withRoot("node_modules/todomvc/examples/vanillajs"))).toBe("node_modules/todomvc/examples/vanillajs");
    expect(staticRoot(withRoot("dist"))).toBe("dist");
    for (const root of ["/srv/app", "../app", "a/../../b"]) {
      expect(reject(withRoot(root))).toMatch(/subject\.serve\.static\.root must be a relative directory inside the project/);
    }
  });

  test("embeddedRootName / isEmbeddedAppName", () => {
    expect(embeddedRootName("embedded:todomvc-vanillajs")).toBe("todomvc-vanillajs");
    expect(embeddedRootName("node_modules/x")).toBeUndefined();
    expect(isEmbeddedAppName("todomvc-vanillajs")).toBe(true);
    expect(isEmbeddedAppName("todomvc")).toBe(false);
  });
});
