/**
 * Pieces of the lab manifest schema shared by both routes (reference contracts.md §1.2, §1.6,
 * §1.7): ids, caps, scenario, policies, warnings, reasons shown for wrong-route keys, and the
 * value checks (http URLs, loopback appUrl, contained relative paths).
 */
import { z } from "zod";
import { type ForeignKeys, nonBlank, strictObject } from "./strict.ts";

/** The only accepted value of the top-level `schema` key. */
export const LAB_SCHEMA_ID = "humanish.lab.v2";

/** Lab, product and subject ids: start alphanumeric so they never look like a path or a flag. */
export const LAB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Task ids (reference §1.4): alphanumeric start, then `[A-Za-z0-9_-]`. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** A lab id (see {@link LAB_ID_PATTERN}). */
export const labId = z.string().regex(LAB_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_`, `.` and `-`" });
/** A task id (see {@link TASK_ID_PATTERN}). */
export const taskId = z.string().regex(TASK_ID_PATTERN, { message: "must start with a letter or digit and use only letters, digits, `_` and `-`" });
/** A finite number ≥ 0 (caps). */
export const nonNegNumber = z.number().finite().nonnegative();
/** An integer ≥ 1 (timeouts in ms). */
export const posInt = z.number().int().positive();
/** A process exit code, 0–255. */
export const exitCode = z.number().int().min(0).max(255);

/** Reason shown for keys of the reference humanish that this humanish does not accept. */
export const REFERENCE_ONLY = "is a reference humanish key that this humanish does not support";

/** Top-level reference keys refused with {@link REFERENCE_ONLY}. */
export const topForeign: ForeignKeys = {
  review: REFERENCE_ONLY,
  defaults: REFERENCE_ONLY,
  comms: REFERENCE_ONLY,
  personas: REFERENCE_ONLY,
};

/** `scenario.caps` (reference §1.6). All optional, non-negative; `maxJobs` an integer. */
export const CapsSchema = strictObject(
  {
    /** Spend cap in USD; 0 = no spend allowed. */
    maxUsd: nonNegNumber.optional(),
    /** Cap on billable jobs (terminal: known billable job count). */
    maxJobs: z.number().int().nonnegative().optional(),
    /** Wall-clock cap on the participant, in minutes; must be > 0 for a live terminal study. */
    maxMinutes: nonNegNumber.optional(),
  },
  { maxTotalUsd: REFERENCE_ONLY },
);

/** `scenario` (reference §1.6): the spend declaration. Absent mode = `dry-run` (invariant 3). */
export const ScenarioSchema = strictObject(
  {
    mode: z.enum(["dry-run", "live"]).default("dry-run"),
    caps: CapsSchema.optional(),
  },
  { ref: REFERENCE_ONLY, inline: REFERENCE_ONLY },
);

/**
 * `policies` (reference §1.7): four deny-by-default credential-boundary declarations. They are
 * recorded as evidence only — humanish has no channel that injects any of these credentials,
 * so `true` produces a warning.
 */
export const PoliciesSchema = strictObject(
  {
    allowPrivateRepoAccess: z.boolean().default(false),
    allowProviderCredentials: z.boolean().default(false),
    allowPaymentCredentials: z.boolean().default(false),
    allowGitHubMutation: z.boolean().default(false),
  },
  {
    redactRepos: REFERENCE_ONLY,
    redactScreenshots: REFERENCE_ONLY,
    allowPublicTargets: "is not supported: the browser route only drives a loopback appUrl",
    mediaPermission: REFERENCE_ONLY,
  },
);

/** `actors[0].reasoningEffort` values (reference §1.4). */
export const reasoningEffort = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/**
 * The brief and model fields of a model-driven actor on either route (`codex-exec`,
 * `openai-computer-use`; reference §1.4), spread between its `count` and `tasks`.
 */
export const modelActorFields = {
  persona: nonBlank().optional(),
  /** The participant brief (author text). */
  mission: nonBlank().optional(),
  /** The model the actor runs; absent = the route's default, recorded as such. */
  model: nonBlank().optional(),
  reasoningEffort: reasoningEffort.optional(),
};

/**
 * The keys every lab starts with (reference §1.2), spread first into each route's lab schema:
 * `schema` (exactly {@link LAB_SCHEMA_ID}), `id`, optional `title` and `description`.
 */
export const labHeadFields = {
  schema: z.literal(LAB_SCHEMA_ID, { message: `must be exactly ${LAB_SCHEMA_ID}` }),
  id: labId,
  title: nonBlank().optional(),
  description: nonBlank().optional(),
};

/**
 * The keys every lab ends with, spread last into each route's lab schema: `scenario` (absent =
 * dry run, invariant 3) and `policies` (absent = all four denied; reference §1.6, §1.7).
 */
export const labTailFields = {
  scenario: ScenarioSchema.default(() => ({ mode: "dry-run" }) as const),
  policies: PoliciesSchema.default(
    () => ({ allowPrivateRepoAccess: false, allowProviderCredentials: false, allowPaymentCredentials: false, allowGitHubMutation: false }) as const,
  ),
};

/** `subject` keys of the reference humanish that neither route supports, each refused with {@link REFERENCE_ONLY}. */
export const subjectReferenceOnly: ForeignKeys = {
  topology: REFERENCE_ONLY,
  exposure: REFERENCE_ONLY,
  publicTarget: REFERENCE_ONLY,
  repos: REFERENCE_ONLY,
  clone: REFERENCE_ONLY,
  localTree: REFERENCE_ONLY,
  env: REFERENCE_ONLY,
  envValues: REFERENCE_ONLY,
  state: REFERENCE_ONLY,
};

/** Reasons shown when a key that acts only on the other route (or only with a model) appears. */
export const NOT_ON_TERMINAL = "only acts on the browser route (subject.source app-url)";
export const NOT_ON_BROWSER = "only acts on the terminal route (subject.source terminal-product)";
export const NO_MODEL = "cannot act on a scripted participant: it runs no model";

/**
 * A non-fatal finding about a lab: an accepted field that is not consumed on this route, or a
 * declaration with no mechanism behind it. `path` is the field path (`execution.timeoutMs`).
 */
export interface LabWarning {
  /** `HUMANISH_LAB_FIELD_INERT` | `HUMANISH_LAB_POLICY_DECLARATION_ONLY` | `HUMANISH_LAB_TARGET_DRY_RUN_ONLY` | `HUMANISH_LAB_ID_MISMATCH`. */
  code: string;
  message: string;
  path: string;
}

/** Zod schema of {@link LabWarning} (for result envelopes and bundles). */
export const LabWarningSchema = z.strictObject({ code: z.string(), message: z.string(), path: z.string() });

/** `scenario` after defaults. */
export type Scenario = z.output<typeof ScenarioSchema>;
/** `scenario.caps`. */
export type Caps = z.output<typeof CapsSchema>;
/** `policies` after defaults (all four booleans present). */
export type Policies = z.output<typeof PoliciesSchema>;

export function toList(v: string | string[]): string[] {
  return typeof v === "string" ? [v] : v;
}

export function isHttpUrl(s: string): boolean {
  if (!/^https?:\/\//i.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** True for a non-empty relative path with no `..` segment, no backslash and no NUL. */
export function isContainedRelativePath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.includes("\u0000") || p.includes("\\")) return false;
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return false;
  return !p.split("/").some((seg) => seg === "..");
}

/**
 * Why `u` is not an acceptable loopback appUrl, or undefined when it is. Accepted exactly:
 * `http://127.0.0.1:<port><path>` or `http://localhost:<port><path>` with an explicit port
 * 1024–65535, no user info, no fragment. Other spellings of loopback (`127.1`, `0x7f000001`,
 * `[::1]`, upper case) are refused so the written URL is the one the guest opens.
 */
export function loopbackUrlProblem(u: string): string | undefined {
  const m = /^http:\/\/(127\.0\.0\.1|localhost):(\d{1,5})(\/[^\s#]*)?$/.exec(u);
  if (!m) {
    if (/^https?:\/\//i.test(u) && !/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(u)) {
      return "must be a loopback URL (http://127.0.0.1:<port>/… or http://localhost:<port>/…); other hosts are refused";
    }
    return "must be http://127.0.0.1:<port>/… or http://localhost:<port>/… with an explicit port, no user info, spaces or fragment";
  }
  const port = Number(m[2]);
  if (!(port >= 1024 && port <= 65535) || m[2]!.startsWith("0")) return `has port ${m[2]}; use 1024–65535 (the app is served unprivileged on this machine)`;
  try {
    const parsed = new URL(u);
    if (parsed.hostname !== m[1] || parsed.port !== m[2]) return "does not parse to the same host and port";
  } catch {
    return "is not a valid URL";
  }
  return undefined;
}
