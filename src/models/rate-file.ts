/**
 * The user's rate file (`humanish.rates.v1`): rates the user read from a public price page,
 * merged over the built-in table so a model the table does not know (or whose price changed) can
 * be priced — and capped in USD — without a new release. Every entry carries the date it was read
 * (`asOf`) and where (`source`); the bundle's cost lines then name that date and source.
 *
 * It lives at `HUMANISH_RATES_FILE`, else `rates.json` in the humanish config directory
 * (`~/.config/humanish/rates.json`). Shape:
 *
 * ```json
 * {"schema": "humanish.rates.v1",
 *  "models": {"gpt-5.5": {"inputPerMTok": 1.25, "cachedInputPerMTok": 0.125, "outputPerMTok": 10,
 *             "maxOutputTokens": 128000, "asOf": "2026-11-30",
 *             "source": "https://platform.openai.com/docs/pricing"}}}
 * ```
 * USD per 1M tokens; `cachedInputPerMTok` defaults to the input rate (no discount assumed),
 * `cacheWritePerMTok` to the input rate.
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { HumanishError } from "../errors.ts";
import { BUILTIN_RATES_AS_OF, type ModelRate, RATE_TABLE, type RateTable } from "./rates.ts";

/** Days after which `doctor` calls a rate table old (prices change). */
export const RATE_TABLE_MAX_AGE_DAYS = 90;
/** Largest rate file read, bytes. */
const MAX_RATE_FILE_BYTES = 1024 * 1024;

const usd = z.number().finite().nonnegative();
const RateEntrySchema = z.strictObject({
  inputPerMTok: usd,
  cachedInputPerMTok: usd.optional(),
  cacheWritePerMTok: usd.optional(),
  outputPerMTok: usd,
  maxOutputTokens: z.number().int().positive(),
  asOf: z.iso.date(),
  source: z.string().min(1),
});

/** `humanish.rates.v1`. */
export const RateFileSchema = z.strictObject({
  schema: z.literal("humanish.rates.v1"),
  models: z.record(z.string().min(1), RateEntrySchema),
});

/** A read rate file. */
export interface UserRates {
  path: string;
  /** Model id → rate, in the table's shape. */
  models: Record<string, ModelRate>;
  /** Oldest `asOf` of its entries (ISO date), or null when it has none. */
  oldestAsOf: string | null;
}

/**
 * Where the user's rate file is: `HUMANISH_RATES_FILE`, else `rates.json` in `configDir`.
 * @param configDir the humanish config directory (`~/.config/humanish` unless overridden).
 */
export function userRatesPath(env: Record<string, string | undefined>, configDir: string): string {
  return env.HUMANISH_RATES_FILE?.trim() || join(configDir, "rates.json");
}

/**
 * The text of the regular file at `path` (a symlink to one is fine: dotfile managers make them),
 * at most {@link MAX_RATE_FILE_BYTES}. A FIFO, a device or a directory is refused without being
 * read — opened non-blocking and checked on the open descriptor, so neither a reader-less FIFO
 * nor `/dev/zero` can hold the command.
 */
function readRegularFile(path: string, bad: (why: string) => HumanishError): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    throw bad("cannot be opened");
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw bad("is not a regular file (a FIFO, device or directory)");
    if (st.size > MAX_RATE_FILE_BYTES) throw bad(`is larger than ${MAX_RATE_FILE_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n <= 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and validates the rate file at `path`.
 * @returns the rates, or undefined when no file is there (and `HUMANISH_RATES_FILE` did not name it).
 * @throws HumanishError `HUMANISH_RATES_FILE_INVALID` naming the file and the field: not JSON,
 *   not the schema, too large, or named by `HUMANISH_RATES_FILE` but missing.
 */
export function readUserRates(path: string, named: boolean): UserRates | undefined {
  const bad = (why: string): HumanishError =>
    new HumanishError("HUMANISH_RATES_FILE_INVALID", `the rate file ${path} ${why}`, {
      next: `Fix ${path} (schema humanish.rates.v1: models.<id> with inputPerMTok, outputPerMTok, maxOutputTokens, asOf, source) or remove it.`,
    });
  if (!existsSync(path)) {
    if (named) throw bad("does not exist (HUMANISH_RATES_FILE names it)");
    return undefined;
  }
  const text = readRegularFile(path, bad);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw bad("is not JSON");
  }
  const parsed = RateFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw bad(`is not a valid rate file: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`);
  }
  const models: Record<string, ModelRate> = {};
  for (const [id, e] of Object.entries(parsed.data.models)) {
    models[id] = {
      inputPerMTok: e.inputPerMTok,
      cachedInputPerMTok: e.cachedInputPerMTok ?? e.inputPerMTok,
      cacheWritePerMTok: e.cacheWritePerMTok ?? e.inputPerMTok,
      outputPerMTok: e.outputPerMTok,
      maxOutputTokens: e.maxOutputTokens,
      ratesAsOf: e.asOf,
      source: e.source,
    };
  }
  const dates = Object.values(models)
    .map((m) => m.ratesAsOf)
    .sort();
  return { path, models, oldestAsOf: dates[0] ?? null };
}

/** `base` with the user's entries merged over it (a user entry replaces the built-in one of the same id). */
export function mergeRates(base: RateTable, user: UserRates | undefined): RateTable {
  return { schema: "humanish.pricing.v1", models: { ...base.models, ...(user?.models ?? {}) } };
}

/**
 * Merges the user's rate file into {@link RATE_TABLE}, the table every pricing call reads by
 * default — once per process, at the start of a command.
 * @returns what was read (undefined: no file).
 * @throws HumanishError `HUMANISH_RATES_FILE_INVALID` (see {@link readUserRates}).
 */
export function applyUserRates(env: Record<string, string | undefined>, configDir: string): UserRates | undefined {
  const user = readUserRates(userRatesPath(env, configDir), Boolean(env.HUMANISH_RATES_FILE?.trim()));
  if (user) Object.assign(RATE_TABLE.models, user.models);
  return user;
}

/** How old a user rate table reads: nothing when undated, a warning when it is stale or dated ahead of today. */
function rateAgeText(age: number | null): string {
  if (age === null) return "";
  // A date after today is a typo or a clock problem, never a table fresher than fresh.
  if (age < 0) return ` (dated ${-age} days after today: check each entry's asOf and this machine's clock)`;
  return ` (${age} days old${age > RATE_TABLE_MAX_AGE_DAYS ? `: older than ${RATE_TABLE_MAX_AGE_DAYS} days, re-read the rates at their source` : ""})`;
}

/** Whole days from ISO date `asOf` to `today` (ISO date); negative when `asOf` is after `today`. */
export function ageInDays(asOf: string, today: string): number {
  return Math.floor((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${asOf}T00:00:00Z`)) / 86_400_000);
}

/** One line of `doctor` about rates: ok, and the words. */
export interface RatesReport {
  name: string;
  ok: boolean;
  /** True when the failure stops commands (an invalid rate file), false for an age warning. */
  required: boolean;
  message: string;
}

/**
 * What `doctor` says about the rates: the built-in table's date and age (not ok past
 * {@link RATE_TABLE_MAX_AGE_DAYS}), and the user's rate file — its path, models, oldest date
 * and age — or that there is none, or why it is invalid.
 */
export function ratesReport(env: Record<string, string | undefined>, configDir: string, today: string): RatesReport[] {
  const builtinAge = ageInDays(BUILTIN_RATES_AS_OF, today);
  const path = userRatesPath(env, configDir);
  const out: RatesReport[] = [];
  let user: UserRates | undefined;
  let invalid: string | undefined;
  try {
    user = readUserRates(path, Boolean(env.HUMANISH_RATES_FILE?.trim()));
  } catch (e) {
    invalid = e instanceof HumanishError ? `${e.code}: ${e.message}${e.next ? ` — ${e.next}` : ""}` : String(e);
  }
  const old = builtinAge > RATE_TABLE_MAX_AGE_DAYS;
  out.push({
    name: "rate table",
    ok: !old,
    required: false,
    message: `built-in rates as of ${BUILTIN_RATES_AS_OF} (${builtinAge} days old)${
      old
        ? `: older than ${RATE_TABLE_MAX_AGE_DAYS} days, prices may have changed and newer models are unpriced — put current rates, dated and sourced, in ${path}`
        : ""
    }`,
  });
  if (invalid) out.push({ name: "rate file", ok: false, required: true, message: invalid });
  else if (!user) out.push({ name: "rate file", ok: true, required: false, message: `none at ${path} (only the built-in rates apply)` });
  else {
    const ids = Object.keys(user.models);
    const age = user.oldestAsOf ? ageInDays(user.oldestAsOf, today) : null;
    out.push({
      name: "rate file",
      ok: age === null || (age >= 0 && age <= RATE_TABLE_MAX_AGE_DAYS),
      required: false,
      message: `${path}: ${ids.length} model(s) (${ids.join(", ") || "none"}), oldest entry as of ${user.oldestAsOf ?? "-"}${rateAgeText(age)}`,
    });
  }
  return out;
}
