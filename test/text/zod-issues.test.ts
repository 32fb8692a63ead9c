import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { zodIssues } from "../../src/text/zod-issues.ts";

describe("zodIssues: a zod error in one line that names each field", () => {
  const schema = z.strictObject({ a: z.object({ b: z.number() }), c: z.string(), d: z.boolean() });

  test("paths are dotted, the top is (root), and max bounds the count", () => {
    const r = schema.safeParse({ a: { b: "x" }, c: 1, d: 0 });
    expect(r.success).toBe(false);
    const all = zodIssues(r.error!);
    expect(all.split("; ").map((p) => p.split(":")[0])).toEqual(["a.b", "c", "d"]);
    expect(zodIssues(r.error!, 1).split("; ")).toHaveLength(1);
    expect(zodIssues(z.string().safeParse(1).error!)).toStartWith("(root): ");
  });

  test("an error with no issues still says something", () => {
    expect(zodIssues({ issues: [] })).toBe("malformed");
    expect(zodIssues({ issues: [{ path: ["x", 0, Symbol.for("s")], message: "bad" }] })).toBe("x.0.Symbol(s): bad");
  });
});
