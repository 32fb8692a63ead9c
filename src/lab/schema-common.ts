/**
 * Pieces of the lab manifest schema shared by both routes: ids, caps, scenario, policies, warnings, reasons shown for wrong-route keys, and the
 * value checks (http URLs, loopback appUrl, contained relative paths).
 */
import { z } from "zod";
import { type ForeignKeys, nonBlank, strictObject } from "./strict.ts";

/** The only accepted value of the top-level `schema` key. */
export const LAB_SCHEMA_ID = "humanish.lab.v2";

/** Lab, product and subject ids: start alphanumeric so they never look like a path or a flag. */
export const LAB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Task ids: alphanumeric start, then `[A-Za-z0-9_-]`. */
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
  defaults: REFERENCE_ONLY,
  comms: REFERENCE_ONLY,
  personas: REFERENCE_ONLY,
};

/** `scenario.caps`. All optional, non-negative; `maxJobs` an integer. */
export const CapsSchema = strictObject(
  {
    /** Spend cap in USD; 0 = no spend allowed. */
    maxUsd: nonNegNumber.optional(),
    /** Cap on billable jobs (terminal: known billable job count). */
    maxJobs: z.number().int().nonnegative().optional(),
    /** Wall-clock cap on the participant, in minutes; must be > 0 for a live terminal study. */
    maxMinutes: nonNegNumber.optional(),
    /** Spend cap of the whole study in USD, summed over every seat; a seat not started because it is spent ends `budget_reached`. */
    maxTotalUsd: nonNegNumber.optional(),
    /** Token cap of one seat (input + output tokens of its model requests, admitted before each request leaves); 0 = no request. */
    maxTokens: z.number().int().nonnegative().optional(),
    /** Token cap of the whole study, summed over every seat. */
    maxTotalTokens: z.number().int().nonnegative().optional(),
  },
  {},
);

/** `scenario`: the spend declaration. Absent mode = `dry-run` (invariant 3). */
export const ScenarioSchema = strictObject(
  {
    mode: z.enum(["dry-run", "live"]).default("dry-run"),
    caps: CapsSchema.optional(),
  },
  { ref: REFERENCE_ONLY, inline: REFERENCE_ONLY },
);

/**
 * `policies`: four deny-by-default credential-boundary declarations. They are
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

/** `actors[0].reasoningEffort` values. */
export const reasoningEffort = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/**
 * The brief and model fields of a model-driven actor on either route (`codex-exec`,
 * `openai-computer-use`), spread between its `count` and `tasks`.
 */
export const modelActorFields = {
  persona: nonBlank().optional(),
  /** The participant brief (author text). */
  mission: nonBlank().optional(),
  /** The model the actor runs; absent = the route's default, recorded as such. */
  model: nonBlank().optional(),
  reasoningEffort: reasoningEffort.optional(),
};

/** Most seats one study runs (every route). */
export const MAX_SEATS = 16;

/** `actors[0].count`: how many seats run the same participant, 1–{@link MAX_SEATS}. */
export const seatCount = z
  .number({ message: `must be an integer from 1 to ${MAX_SEATS}` })
  .int({ message: `must be an integer from 1 to ${MAX_SEATS}` })
  .min(1, { message: `must be at least 1 (a study needs one seat)` })
  .max(MAX_SEATS, { message: `must be at most ${MAX_SEATS} seats` });

/** A seat id: a lane id or roster id; the same alphabet as task ids, at most 40 characters (it names a bundle folder). */
export const seatId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, { message: "must be 1–40 of letters, digits, `_` and `-`, starting with a letter or digit" });

/** The per-seat fields a lane or roster entry may set (the device is checked per route). */
const seatFields = {
  persona: nonBlank().optional(),
  /** A device preset name (browser route only). */
  device: nonBlank().optional(),
  /** Extra instruction appended to this seat's brief. */
  instruction: nonBlank().optional(),
};

/** `actors[0].lanes[]`: one explicitly named seat each. */
export const LaneSchema = strictObject({ id: seatId, ...seatFields });

/** `actors[0].roster[]`: `count` seats sharing fields, named `<id>-01`…`<id>-NN`. */
export const RosterSchema = strictObject({ id: seatId, count: seatCount, ...seatFields });

/** The seat keys every actor accepts: exactly one of `count`, `lanes`, `roster` (checked in parseLab). */
export const actorSeatFields = {
  lanes: z.array(LaneSchema).min(1, { message: "must list at least one lane when present" }).optional(),
  roster: z.array(RosterSchema).min(1, { message: "must list at least one roster entry when present" }).optional(),
};

/** `execution.concurrency`: most seats running at once, 1–{@link MAX_SEATS} (absent: all seats, capped by the machine). */
export const concurrencyField = z
  .number({ message: `must be an integer from 1 to ${MAX_SEATS}` })
  .int({ message: `must be an integer from 1 to ${MAX_SEATS}` })
  .min(1, { message: "must be at least 1 (0 would start no seat)" })
  .max(MAX_SEATS, { message: `must be at most ${MAX_SEATS}` });

/**
 * The keys every lab starts with, spread first into each route's lab schema:
 * `schema` (exactly {@link LAB_SCHEMA_ID}), `id`, optional `title` and `description`.
 */
export const labHeadFields = {
  schema: z.literal(LAB_SCHEMA_ID, { message: `must be exactly ${LAB_SCHEMA_ID}` }),
  id: labId,
  title: nonBlank().optional(),
  description: nonBlank().optional(),
};

/**
 * `review.analysis`: the post-run analyst a study runs after the seal, into the same bundle
 * (`false` skips it; absent: the default of src/study/post-analysis.ts). `maxCost` is USD. The
 * Codex analyst is billed to an account and refuses a numeric cap, so `codex` with `maxCost` is
 * refused here rather than after the study.
 */
export const AnalysisSchema = strictObject({
  provider: z.enum(["openai", "codex"], { message: "must be openai or codex" }),
  model: nonBlank("a model name").optional(),
  maxCost: nonNegNumber.optional(),
  question: nonBlank("a question for the analyst").optional(),
}).superRefine((a, ctx) => {
  if (a.provider === "codex" && a.maxCost !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["maxCost"],
      message:
        "cannot act with provider codex: the Codex analyst is billed to your account and refuses a numeric USD cap (remove maxCost, or use provider openai)",
    });
});

/**
 * `review.scorer`: the lab's product adapter, a module path relative to the lab file's folder.
 * Only its shape is checked here; where it points (inside the lab folder, an importable
 * extension, a file that exists and loads with a hook) is checked by the loader in
 * src/adapters before any spend, with its own `HUMANISH_LAB_SCORER_*` codes.
 */
export const ReviewSchema = strictObject(
  {
    scorer: strictObject({ ref: nonBlank("a path to the scorer module, relative to the lab file") }).optional(),
    analysis: z.union([z.literal(false), AnalysisSchema]).optional(),
  },
  { scoring: REFERENCE_ONLY, milestones: REFERENCE_ONLY, vocabulary: REFERENCE_ONLY },
);

/**
 * The keys every lab ends with, spread last into each route's lab schema: `scenario` (absent =
 * dry run, invariant 3), `policies` (absent = all four denied) and `review` (absent = no scorer).
 */
export const labTailFields = {
  review: ReviewSchema.optional(),
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
/** `review.analysis` when it names an analyst. */
export type AnalysisConfig = z.output<typeof AnalysisSchema>;

/**
 * Why `s` cannot be a URL or path target, or undefined: a control character (C0, DEL or C1,
 * e.g. NUL, tab, newline) would be cut, rewritten or typed as a keystroke on its way to the
 * browser or file system, so the target opened would not be the one written.
 */
export function controlCharProblem(s: string): string | undefined {
  const m = /\p{Cc}/u.exec(s);
  if (!m) return undefined;
  const code = m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return `must not contain control characters (found U+${code} at character ${m.index + 1}); write it without them`;
}

/**
 * A string field naming a URL or path target: refused first for control characters (see
 * {@link controlCharProblem}), so that message wins over any format rule chained after it.
 */
export function targetString() {
  return z.string().check((ctx) => {
    const why = controlCharProblem(ctx.value);
    if (why) ctx.issues.push({ code: "custom", message: why, input: ctx.value, abort: true });
  });
}

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

/** True for a host name or address that only means something on one machine or one private network. */
export function isPrivateHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal")) return true;
  if (!h.includes(".") && !h.includes(":")) return true; // a bare name resolves only on a local network
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168)
    );
  }
  if (h.includes(":")) return h === "::1" || h === "::" || h.startsWith("fc") || h.startsWith("fd") || h.startsWith("fe80") || h.startsWith("::ffff:");
  return false;
}

/**
 * Why `u` is not an acceptable public appUrl (the `e2b-desktop` target, whose desktop runs on
 * E2B's machines), or undefined when it is: `https://` on a public host (no loopback name, no
 * private or link-local address), no user info, no fragment.
 */
export function publicHttpsUrlProblem(u: string): string | undefined {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return "is not a valid URL";
  }
  if (url.protocol !== "https:") return "must be https:// on a public host";
  if (url.username || url.password) return "must not carry user info";
  if (url.hash || u.includes("#")) return "must not carry a fragment";
  if (/\s/.test(u)) return "must not contain spaces";
  if (isPrivateHost(url.hostname)) return `names ${url.hostname}, a private or local host that an E2B desktop cannot reach`;
  return undefined;
}
