/** The user's rate file: validated, dated and sourced, merged over the built-in table, shown by doctor with its age. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILTIN_RATES_AS_OF, costOf, RATE_TABLE, rateFor } from "../../src/models/index.ts";
import { ageInDays, applyUserRates, mergeRates, ratesReport, readUserRates, userRatesPath } from "../../src/models/rate-file.ts";
import { cli } from "../cli/support.ts";

const dir = mkdtempSync(join(tmpdir(), "humanish-rates-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A model id no built-in entry or other test uses (the merge into the shared table is additive). */
const MODEL = "humanish-test-rated-model";
const entry = { inputPerMTok: 2, outputPerMTok: 8, maxOutputTokens: 64_000, asOf: "2026-11-30", source: "https://example.test/pricing" };

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

describe("user rate file", () => {
  test("a valid file prices a model the built-in table does not know, with its own date and source; it overrides a built-in entry", () => {
    const p = file("rates.json", { schema: "humanish.rates.v1", models: { [MODEL]: entry, "gpt-5.1-codex": { ...entry, inputPerMTok: 1.5 } } });
    const user = readUserRates(p, true);
    expect(user?.oldestAsOf).toBe("2026-11-30");
    const table = mergeRates(RATE_TABLE, user);
    expect(rateFor(MODEL, RATE_TABLE)).toBeUndefined();
    expect(rateFor(MODEL, table)).toMatchObject({ inputPerMTok: 2, cachedInputPerMTok: 2, outputPerMTok: 8, ratesAsOf: "2026-11-30" });
    expect(rateFor("gpt-5.1-codex", table)?.inputPerMTok).toBe(1.5);
    expect(rateFor("gpt-5-mini", table)).toEqual(rateFor("gpt-5-mini", RATE_TABLE));
    const usage = { input: 1_000_000, cached: 0, cacheWrite: 0, output: 1_000_000, reasoning: 0 };
    expect(costOf(MODEL, usage, table)).toEqual({ usd: 10, ratesAsOf: "2026-11-30", source: "https://example.test/pricing", reason: null });
  });

  test("HUMANISH_RATES_FILE wins over the config directory; absent there is no file", () => {
    expect(userRatesPath({ HUMANISH_RATES_FILE: "/x/r.json" }, "/cfg")).toBe("/x/r.json");
    expect(userRatesPath({}, "/cfg")).toBe("/cfg/rates.json");
    expect(readUserRates(join(dir, "absent.json"), false)).toBeUndefined();
    expect(() => readUserRates(join(dir, "absent.json"), true)).toThrow(expect.objectContaining({ code: "HUMANISH_RATES_FILE_INVALID" }));
  });

  test("an entry without asOf or source, a bad date, an unknown field or not JSON is HUMANISH_RATES_FILE_INVALID naming the file and field", () => {
    const { asOf: _a, ...noDate } = entry;
    const { source: _s, ...noSource } = entry;
    const cases: [unknown, string][] = [
      [{ schema: "humanish.rates.v1", models: { [MODEL]: noDate } }, `models.${MODEL}.asOf`],
      [{ schema: "humanish.rates.v1", models: { [MODEL]: noSource } }, `models.${MODEL}.source`],
      [{ schema: "humanish.rates.v1", models: { [MODEL]: { ...entry, asOf: "last week" } } }, `models.${MODEL}.asOf`],
      [{ schema: "humanish.rates.v1", models: { [MODEL]: { ...entry, outputPerMTok: -1 } } }, `models.${MODEL}.outputPerMTok`],
      [{ schema: "humanish.rates.v1", models: { [MODEL]: { ...entry, discount: 1 } } }, `models.${MODEL}`],
      [{ schema: "humanish.rates.v2", models: {} }, "schema"],
      ["{not json", "not JSON"],
    ];
    for (const [i, [content, field]] of cases.entries()) {
      const p = file(`bad-${i}.json`, content);
      const err = (() => {
        try {
          readUserRates(p, false);
        } catch (e) {
          return e as { code: string; message: string };
        }
        return undefined;
      })();
      expect(err?.code).toBe("HUMANISH_RATES_FILE_INVALID");
      expect(err?.message).toContain(p);
      expect(err?.message).toContain(field);
    }
  });

  test("a FIFO, /dev/zero (also behind a symlink) or a directory is refused at once, never read", () => {
    const fifo = join(dir, "rates.fifo");
    Bun.spawnSync(["mkfifo", fifo]);
    const zeroLink = join(dir, "zero-link.json");
    symlinkSync("/dev/zero", zeroLink);
    for (const path of [fifo, "/dev/zero", zeroLink, dir]) {
      expect(() => readUserRates(path, true)).toThrow(
        expect.objectContaining({ code: "HUMANISH_RATES_FILE_INVALID", message: expect.stringContaining("is not a regular file") }),
      );
    }
  });

  test("applyUserRates merges into the table every pricing call reads", () => {
    const p = file("applied.json", { schema: "humanish.rates.v1", models: { [`${MODEL}-applied`]: entry } });
    expect(rateFor(`${MODEL}-applied`)).toBeUndefined();
    applyUserRates({ HUMANISH_RATES_FILE: p }, "/nonexistent");
    expect(rateFor(`${MODEL}-applied`)?.ratesAsOf).toBe("2026-11-30");
  });

  test("doctor's report: the built-in table's age warns past 90 days; the user file's path, models and age", () => {
    expect(ageInDays("2025-11-20", "2026-12-01")).toBe(376);
    const p = file("report.json", { schema: "humanish.rates.v1", models: { [MODEL]: entry } });
    const late = ratesReport({ HUMANISH_RATES_FILE: p }, "/cfg", "2026-12-01");
    expect(late[0]).toMatchObject({ name: "rate table", ok: false, required: false });
    expect(late[0]?.message).toContain(`built-in rates as of ${BUILTIN_RATES_AS_OF} (376 days old): older than 90 days`);
    expect(late[1]).toMatchObject({ name: "rate file", ok: true });
    expect(late[1]?.message).toContain(`${p}: 1 model(s) (${MODEL}), oldest entry as of 2026-11-30 (1 days old)`);
    const ahead = ratesReport({ HUMANISH_RATES_FILE: p }, "/cfg", "2026-11-20");
    expect(ahead[1]).toMatchObject({ name: "rate file", ok: false });
    expect(ahead[1]?.message).toContain("oldest entry as of 2026-11-30 (dated 10 days after today: check each entry's asOf");
    expect(ahead[1]?.message).not.toContain("-10");
    const fresh = ratesReport({}, "/nonexistent-config", "2025-12-01");
    expect(fresh[0]).toMatchObject({ ok: true });
    expect(fresh[1]?.message).toBe("none at /nonexistent-config/rates.json (only the built-in rates apply)");
    const broken = ratesReport({ HUMANISH_RATES_FILE: file("broken.json", "[]") }, "/cfg", "2026-12-01");
    expect(broken[1]).toMatchObject({ ok: false, required: true });
  });

  test("the CLI: doctor shows the rate rows; a broken rate file fails another command with its code, doctor reports it", async () => {
    const good = file("cli.json", { schema: "humanish.rates.v1", models: { [`${MODEL}-cli`]: entry } });
    const r = await cli(["doctor", "--cwd", dir, "--json"], { ...process.env, HUMANISH_RATES_FILE: good });
    const checks = r.json<{ checks: { name: string; ok: boolean; message: string }[] }>().checks;
    expect(checks.find((c) => c.name === "rate table")?.message).toContain(`built-in rates as of ${BUILTIN_RATES_AS_OF}`);
    expect(checks.find((c) => c.name === "rate file")).toMatchObject({ ok: true });
    const broken = file("cli-broken.json", "{");
    const d = await cli(["doctor", "--cwd", dir, "--json"], { ...process.env, HUMANISH_RATES_FILE: broken });
    expect(d.json<{ checks: { name: string; ok: boolean; message: string }[] }>().checks.find((c) => c.name === "rate file")?.message).toContain(
      "HUMANISH_RATES_FILE_INVALID",
    );
    const other = await cli(["lab", "list", "--cwd", dir, "--json"], { ...process.env, HUMANISH_RATES_FILE: broken });
    expect(other.json<{ ok: boolean; error: { code: string } }>()).toMatchObject({ ok: false, error: { code: "HUMANISH_RATES_FILE_INVALID" } });
  }, 120_000);
});
