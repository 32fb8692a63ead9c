/**
 * Every command that writes a file the user names goes through the one safe writer:
 * `runs compare --html FILE` and `types --out FILE` refuse a symlink (its target untouched), a
 * FIFO (refused at once rather than hanging), and an existing file without `--force`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempProject, writeLiveTerminal } from "../bundle/helpers.ts";
import { cli } from "./support.ts";

const project = tempProject();
afterAll(() => project.cleanup());
// Two live runs of one lab, for compare.
beforeAll(async () => {
  for (const id of ["live-a", "live-b"]) await writeLiveTerminal(project.cwd, id);
});

interface Out {
  ok: boolean;
  error?: { code: string; message: string; next: string };
}

async function run(argv: string[]): Promise<{ code: number; out: Out }> {
  const r = await cli([...argv, "--cwd", project.cwd, "--json"]);
  return { code: r.code, out: r.json<Out>() };
}

/** For each command: the argv that writes `name`. */
const writers: [string, (name: string) => string[]][] = [
  ["runs compare --html", (name) => ["runs", "compare", "live-a", "live-b", "--html", name]],
  ["types --out", (name) => ["types", "--out", name]],
];

describe("user-named outputs", () => {
  for (const [what, argv] of writers) {
    const ext = what.startsWith("types") ? ".d.ts" : ".html";
    test(`${what}: new file written; existing refused without --force, replaced with it`, async () => {
      const name = `fresh-${what.split(" ")[0]}${ext}`;
      expect((await run(argv(name))).code).toBe(0);
      const first = readFileSync(join(project.cwd, name), "utf8");
      writeFileSync(join(project.cwd, name), "older copy");
      const again = await run(argv(name));
      expect([again.code, again.out.ok, again.out.error?.code]).toEqual([2, false, "HUMANISH_OUTPUT_EXISTS"]);
      expect(again.out.error?.next).toContain("--force");
      expect(readFileSync(join(project.cwd, name), "utf8")).toBe("older copy");
      expect((await run([...argv(name), "--force"])).code).toBe(0);
      expect(readFileSync(join(project.cwd, name), "utf8").slice(0, 200)).toBe(first.slice(0, 200));
    });

    test(`${what}: a symlink is never written through, even with --force`, async () => {
      const victim = join(project.cwd, `victim-${what.split(" ")[0]}.txt`);
      writeFileSync(victim, "precious");
      const name = `link-${what.split(" ")[0]}${ext}`;
      symlinkSync(victim, join(project.cwd, name));
      for (const extra of [[], ["--force"]]) {
        const r = await run([...argv(name), ...extra]);
        expect([r.code, r.out.error?.code]).toEqual([2, "HUMANISH_OUTPUT_UNSAFE"]);
        expect(r.out.error?.message).toContain("symlink");
      }
      expect(readFileSync(victim, "utf8")).toBe("precious");
    });

    test(`${what}: a FIFO is refused at once (the command would block forever opening it)`, async () => {
      const name = `pipe-${what.split(" ")[0]}${ext}`;
      expect(spawnSync("mkfifo", [join(project.cwd, name)]).status).toBe(0);
      const r = await run([...argv(name), "--force"]);
      expect([r.code, r.out.error?.code]).toEqual([2, "HUMANISH_OUTPUT_UNSAFE"]);
      expect(r.out.error?.message).toContain("FIFO");
    });
  }
});
