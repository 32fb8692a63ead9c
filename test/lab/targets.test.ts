/**
 * URL and path targets refuse control characters (C0, DEL, C1): `open: "/\0"` and friends
 * would be cut or rewritten on the way to the browser or the file system (a tab or newline is
 * even typed as a keystroke into the address bar), so the target opened would not be the one
 * written. Each refusal names the field and the character.
 */
import { describe, expect, test } from "bun:test";
import { browserBase, reject, terminalBase, toYaml } from "./fixtures.ts";

const CONTROLS: Array<[string, string]> = [
  ["\u0000", "0000"],
  ["\t", "0009"],
  ["\n", "000A"],
  ["\r", "000D"],
  ["\u001b", "001B"],
  ["\u007f", "007F"],
  ["\u0085", "0085"],
];

function withStep(step: unknown): string {
  const lab = browserBase();
  lab.actors[0].steps = [step, "screenshot"];
  return toYaml(lab);
}

describe("control characters in targets", () => {
  for (const [ch, code] of CONTROLS) {
    test(`open: "/a${JSON.stringify(ch).slice(1, -1)}" is refused naming the step and U+${code}`, () => {
      expect(reject(withStep({ open: `/a${ch}` }))).toMatch(
        new RegExp(`^t\\.yaml:\\d+:\\d+: actors\\[0\\]\\.steps\\[0\\]\\.open must not contain control characters \\(found U\\+${code} at character 3\\)`),
      );
    });
  }

  test('the reported case: open: "/\\0"', () => {
    expect(reject(withStep({ open: "/\u0000" }))).toMatch(/actors\[0\]\.steps\[0\]\.open must not contain control characters \(found U\+0000 at character 2\)/);
  });

  test("appUrl, urlIncludes, urlPathEquals and serve.static.root refuse them too", () => {
    const app = browserBase();
    app.subject.appUrl = "http://127.0.0.1:4173/\u0000";
    expect(reject(toYaml(app))).toMatch(/subject\.appUrl must not contain control characters \(found U\+0000/);

    const check = (c: Record<string, string>) => {
      const lab = browserBase();
      lab.actors[0].tasks = [{ id: "t", goal: "g", check: c }];
      return reject(toYaml(lab));
    };
    expect(check({ urlIncludes: "/a\u0007" })).toMatch(/actors\[0\]\.tasks\[0\]\.check\.urlIncludes must not contain control characters \(found U\+0007/);
    expect(check({ urlPathEquals: "/a\u0000" })).toMatch(/actors\[0\]\.tasks\[0\]\.check\.urlPathEquals must not contain control characters/);

    const served = browserBase();
    served.subject.serve = { static: { root: "site\u0000" } };
    expect(reject(toYaml(served))).toMatch(/subject\.serve\.static\.root must not contain control characters \(found U\+0000/);
  });

  test("publicSurfaces URLs on the terminal route refuse them (URL parsing would silently drop a tab)", () => {
    const lab = terminalBase();
    lab.subject.product.publicSurfaces = ["https://jqlang.org/\tmanual/"];
    expect(reject(toYaml(lab))).toMatch(/subject\.product\.publicSurfaces\[0\] must not contain control characters \(found U\+0009/);
  });

  test("ordinary targets, including non-ASCII text, still parse", () => {
    const lab = browserBase();
    lab.actors[0].steps = [{ open: "/search?q=caf%C3%A9&x=é" }, "screenshot"];
    expect(() => reject(toYaml(lab))).toThrow(/expected a rejection/);
  });
});
