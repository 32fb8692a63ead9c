/**
 * The episode reward: pass rate of the verify commands, optionally overridden by a number a
 * verify command writes to {@link REWARD_OVERRIDE_PATH}; a missing file means no override.
 *
 * THE OVERRIDE FILE IS NOT A TRUST BOUNDARY. Any process in the sandbox (including one the agent
 * left running in the background) can write it while the verify commands run. It exists so a
 * task author can report partial credit; it must not be used to score adversarial agents.
 *
 * The parser here is pure. Reading the file inside the sandbox (size-bounded, non-blocking, so a
 * FIFO cannot hang the reader) is {@link REWARD_READ_SCRIPT}, whose output {@link parseRewardProbe}
 * turns into the same verdict.
 */

/** Absolute path of the override file inside the sandbox. */
export const REWARD_OVERRIDE_PATH = "/home/user/logs/verifier/reward.txt";

/** Largest override file accepted, in bytes. A plain decimal number never needs more. */
export const REWARD_MAX_BYTES = 128;

/** Why an override file was ignored (stable tokens, recorded in `state.reward_override_ignored`). */
export type RewardIgnoredReason = "empty" | "too_large" | "multiple_lines" | "not_decimal" | "not_finite" | "not_regular_file" | "unreadable" | "not_deleted";

/** The recorded reason an override was ignored; `detail` is human text (already bounded). */
export interface RewardOverrideIgnored {
  reason: RewardIgnoredReason;
  detail: string;
}

/** Verdict on the override file's content. */
export type RewardOverrideVerdict = { kind: "absent" } | { kind: "accepted"; value: number } | { kind: "ignored"; ignored: RewardOverrideIgnored };

/** Optional sign, digits, optional `.digits` fraction, optional exponent. Nothing else. */
const PLAIN_DECIMAL = /^[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Shows at most 40 characters of the offending text, control characters escaped. */
function preview(text: string): string {
  const cut = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return JSON.stringify(cut);
}

/**
 * Judges the bytes of a regular override file.
 *
 * `bytes` is what was read (at most `REWARD_MAX_BYTES + 1`), `sizeBytes` the file's size from
 * `stat`. Accepted: one plain decimal number (see {@link PLAIN_DECIMAL}) whose value is finite —
 * negative values and values above 1 are accepted as written. Surrounding spaces/tabs and one
 * trailing line ending are tolerated. Everything else is ignored with a reason.
 */
export function parseRewardOverride(bytes: Uint8Array, sizeBytes: number = bytes.length): RewardOverrideVerdict {
  if (sizeBytes > REWARD_MAX_BYTES || bytes.length > REWARD_MAX_BYTES) {
    return ignored("too_large", `file is ${Math.max(sizeBytes, bytes.length)} bytes; the limit is ${REWARD_MAX_BYTES}`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return ignored("not_decimal", "file is not UTF-8 text");
  }
  let body = text;
  if (body.endsWith("\r\n")) body = body.slice(0, -2);
  else if (body.endsWith("\n")) body = body.slice(0, -1);
  body = body.replace(/^[ \t]+|[ \t]+$/g, "");
  if (body.length === 0) return ignored("empty", "file is empty");
  if (/[\r\n]/.test(body)) return ignored("multiple_lines", `file has more than one line: ${preview(text)}`);
  if (!PLAIN_DECIMAL.test(body)) return ignored("not_decimal", `not a plain decimal number: ${preview(body)}`);
  const value = Number(body);
  if (!Number.isFinite(value)) return ignored("not_finite", `value ${preview(body)} is not finite`);
  return { kind: "accepted", value };
}

function ignored(reason: RewardIgnoredReason, detail: string): RewardOverrideVerdict {
  return { kind: "ignored", ignored: { reason, detail } };
}

/**
 * Shell script (run with `bash -c`) that deletes the override file and proves it is gone.
 * Prints `deleted` on success, `still-present` when something keeps the path alive (e.g. the
 * directory was made read-only), in which case no override is trusted for this episode.
 */
export const REWARD_CLEAR_SCRIPT = [
  `f=${REWARD_OVERRIDE_PATH}`,
  `rm -rf -- "$f" 2>/dev/null`,
  `mkdir -p -- "\${f%/*}" 2>/dev/null`,
  `if [ -e "$f" ] || [ -L "$f" ]; then echo still-present; else echo deleted; fi`,
].join("\n");

/**
 * Shell script that probes the override file without ever blocking: it classifies the path
 * first (a FIFO, socket, device, directory or symlink is reported, never opened) and then
 * reads at most `REWARD_MAX_BYTES + 1` bytes with `O_NONBLOCK` (`dd iflag=nonblock`), so even a
 * file swapped for a FIFO after the check cannot hang the reader. Output lines:
 * `absent` | `type <kind>` | `size <n>` then `data <base64>`. The caller also runs it under a
 * per-command deadline.
 */
export const REWARD_READ_SCRIPT = [
  `f=${REWARD_OVERRIDE_PATH}`,
  `if [ -L "$f" ]; then echo "type symlink"; exit 0; fi`,
  `if [ ! -e "$f" ]; then echo absent; exit 0; fi`,
  `if [ -p "$f" ]; then echo "type fifo"; exit 0; fi`,
  `if [ -d "$f" ]; then echo "type directory"; exit 0; fi`,
  `if [ ! -f "$f" ]; then echo "type special"; exit 0; fi`,
  `echo "size $(stat -c %s -- "$f")"`,
  `printf 'data '; dd if="$f" iflag=nonblock bs=${REWARD_MAX_BYTES + 1} count=1 2>/dev/null | base64 -w0; echo`,
].join("\n");

/**
 * Turns the stdout of {@link REWARD_READ_SCRIPT} (and its exit code) into a verdict.
 * A probe that did not finish cleanly is `unreadable`.
 */
export function parseRewardProbe(stdout: string, exitCode: number, timedOut: boolean): RewardOverrideVerdict {
  if (timedOut) return ignored("unreadable", "reading the file did not finish before the deadline");
  const lines = stdout.split("\n").filter((l) => l.length > 0);
  const first = lines[0] ?? "";
  if (first === "absent") return { kind: "absent" };
  if (first.startsWith("type ")) return ignored("not_regular_file", `path is a ${first.slice(5)}, not a regular file`);
  if (exitCode !== 0) return ignored("unreadable", `probe exited ${exitCode}`);
  const sizeMatch = /^size ([0-9]+)$/.exec(first);
  const dataLine = lines[1];
  if (!sizeMatch || dataLine === undefined || !dataLine.startsWith("data")) {
    return ignored("unreadable", "the file could not be read");
  }
  const size = Number(sizeMatch[1]);
  const b64 = dataLine.slice(4).trim();
  const bytes = new Uint8Array(Buffer.from(b64, "base64"));
  return parseRewardOverride(bytes, size);
}

/** Outcome of scoring one episode. `reward` is what the episode reports. */
export interface RewardOutcome {
  reward: number;
  /** Passed verify commands / total (0 when there are no verify commands). */
  passRate: number;
  passed: number;
  total: number;
  source: "override" | "pass_rate";
  /** Accepted override value, when one was used. */
  override: number | null;
  /** Why an override file was ignored; null when none existed or it was used. */
  overrideIgnored: RewardOverrideIgnored | null;
}

/**
 * Combines the verify results with the override verdict. With zero verify commands the pass
 * rate is 0 (nothing was shown to pass).
 */
export function computeReward(passed: number, total: number, verdict: RewardOverrideVerdict): RewardOutcome {
  const passRate = total === 0 ? 0 : passed / total;
  if (verdict.kind === "accepted") {
    return { reward: verdict.value, passRate, passed, total, source: "override", override: verdict.value, overrideIgnored: null };
  }
  return {
    reward: passRate,
    passRate,
    passed,
    total,
    source: "pass_rate",
    override: null,
    overrideIgnored: verdict.kind === "ignored" ? verdict.ignored : null,
  };
}
