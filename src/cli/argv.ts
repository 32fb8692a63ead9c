/**
 * argv → the command to run, with strict flag parsing (`node:util` parseArgs). A usage error
 * (unknown command or flag, missing argument) carries a did-you-mean and exits 1.
 */
import { parseArgs } from "node:util";
import { nearest } from "../text/nearest.ts";
import { COMMANDS, type CommandSpec, commandWords } from "./spec.ts";

/** A parsed invocation. */
export type Parsed =
  | { kind: "version"; json: boolean }
  | { kind: "help"; topic?: CommandSpec; group?: string }
  | { kind: "orientation"; json: boolean }
  | { kind: "command"; spec: CommandSpec; args: Record<string, string>; flags: Record<string, string | boolean | undefined> }
  | {
      kind: "usage-error";
      message: string;
      /** The command's result schema when the command is known, else `humanish.usage-result.v1`. */
      schema: string;
      /** The help command to read next. */
      next: string;
      /** `--json` was among the arguments: the error is printed as one JSON document. */
      json: boolean;
    };

/** Result schema of a usage error whose command is unknown. */
export const USAGE_RESULT_SCHEMA = "humanish.usage-result.v1";

function usageError(argv: string[], message: string, spec?: CommandSpec): Parsed {
  return {
    kind: "usage-error",
    message,
    schema: spec?.schema ?? USAGE_RESULT_SCHEMA,
    next: spec ? `humanish ${spec.path.join(" ")} --help` : "humanish --help",
    json: argv.includes("--json"),
  };
}

/** Parses argv (without the binary and script). Never throws. */
export function parseArgv(argv: string[]): Parsed {
  if (argv.length === 0) return { kind: "orientation", json: false };
  if (argv.length === 1 && argv[0] === "--json") return { kind: "orientation", json: true };
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") return { kind: "version", json: argv.includes("--json") };
  if (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    const rest = argv.slice(1).filter((a) => !a.startsWith("-"));
    return helpFor(rest);
  }
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith("-")) break;
    words.push(a);
  }
  const spec = matchCommand(words);
  if (!spec) {
    const first = words[0] ?? argv[0]!;
    const group = COMMANDS.filter((c) => c.path[0] === first);
    if (group.length > 0) {
      const sub = words[1];
      const subs = group.map((c) => c.path[1]!).filter(Boolean);
      if (sub === undefined) {
        if (argv.includes("--help") || argv.includes("-h")) return { kind: "help", group: first };
        return usageError(argv, `\`humanish ${first}\` needs a subcommand: ${subs.join(", ")}`);
      }
      const hint = nearest(sub, subs);
      return usageError(
        argv,
        `unknown command \`humanish ${first} ${sub}\`${hint ? `; did you mean \`humanish ${first} ${hint}\`?` : `; known: ${subs.join(", ")}`}`,
      );
    }
    const hint = nearest(first, commandWords());
    return usageError(argv, `unknown command \`${first}\`${hint ? `; did you mean \`${hint}\`?` : ""} (see \`humanish --help\`)`);
  }
  const rest = withBareValues(argv.slice(spec.path.length), spec);
  if (rest.includes("--help") || rest.includes("-h")) return { kind: "help", topic: spec };
  const options: Record<string, { type: "boolean" | "string" }> = {};
  for (const [name, f] of Object.entries(spec.flags)) options[name] = { type: f.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  } catch (e) {
    return usageError(argv, explainParseError(e as Error, spec, rest), spec);
  }
  const positionals = parsed.positionals;
  const args: Record<string, string> = {};
  for (let i = 0; i < spec.positionals.length; i++) {
    const p = spec.positionals[i]!;
    const v = positionals[i];
    if (v === undefined) {
      if (p.required) return usageError(argv, `\`humanish ${spec.path.join(" ")}\` needs <${p.name}> (see \`humanish ${spec.path.join(" ")} --help\`)`, spec);
      continue;
    }
    args[p.name] = v;
  }
  if (positionals.length > spec.positionals.length) {
    return usageError(argv, `unexpected argument \`${positionals[spec.positionals.length]}\` for \`humanish ${spec.path.join(" ")}\``, spec);
  }
  return { kind: "command", spec, args, flags: parsed.values as Record<string, string | boolean | undefined> };
}

/**
 * Gives a flag that may stand alone (`bareValue` in the table) its value: `--watch` followed by
 * a number keeps the number, any other `--watch` becomes `--watch=<bareValue>`.
 */
function withBareValues(args: string[], spec: CommandSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const f = a.startsWith("--") && !a.includes("=") ? spec.flags[a.slice(2)] : undefined;
    if (f?.bareValue !== undefined) {
      const next = args[i + 1];
      if (next !== undefined && /^[0-9]+$/.test(next)) {
        out.push(`${a}=${next}`);
        i++;
      } else out.push(`${a}=${f.bareValue}`);
    } else out.push(a);
  }
  return out;
}

function matchCommand(words: string[]): CommandSpec | undefined {
  // Longest path first, so `lab run` wins over a hypothetical `lab`.
  const sorted = [...COMMANDS].sort((a, b) => b.path.length - a.path.length);
  return sorted.find((c) => c.path.every((w, i) => words[i] === w));
}

function helpFor(words: string[]): Parsed {
  if (words.length === 0) return { kind: "help" };
  const spec = matchCommand(words);
  if (spec) return { kind: "help", topic: spec };
  if (COMMANDS.some((c) => c.path[0] === words[0])) return { kind: "help", group: words[0]! };
  return { kind: "help" };
}

function explainParseError(e: Error, spec: CommandSpec, rest: string[]): string {
  const cmd = `humanish ${spec.path.join(" ")}`;
  const code = (e as Error & { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const bad = rest.find((a) => a.startsWith("-") && !(a.replace(/^-+/, "").split("=")[0]! in spec.flags)) ?? "";
    const name = bad.replace(/^-+/, "").split("=")[0]!;
    const hint = nearest(name, Object.keys(spec.flags));
    const elsewhere = COMMANDS.filter((c) => c !== spec && name in c.flags).map((c) => `humanish ${c.path.join(" ")}`);
    return (
      `unknown option \`${bad}\` for \`${cmd}\`` +
      (hint ? `; did you mean \`--${hint}\`?` : "") +
      (!hint && elsewhere.length ? ` (--${name} is an option of \`${elsewhere[0]}\`)` : "")
    );
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const opt = /Option '(--[a-z0-9-]+)/.exec(e.message)?.[1];
    const f = opt ? spec.flags[opt.slice(2)] : undefined;
    if (opt && f?.type === "string") {
      // `--max-cost -1`: the value parses as an option, so say what was read instead of "needs a value" alone.
      const after = rest[rest.indexOf(opt) + 1];
      const seen = after?.startsWith("-") ? `; \`${after}\` after it reads as an option — write \`${opt}=${after}\` to pass it as the value` : "";
      return `\`${opt}\` needs a value${f.value ? ` (${opt} ${f.value})` : ""}${seen} (in \`${cmd}\`)`;
    }
    return `${e.message.split("\n")[0]} (in \`${cmd}\`)`;
  }
  return `${e.message.split("\n")[0]} (in \`${cmd}\`)`;
}

/** Help text for one command, a group, or everything. */
export function helpText(topic?: CommandSpec, group?: string): string {
  if (topic) {
    const pos = topic.positionals.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`)).join(" ");
    const lines = [`humanish ${topic.path.join(" ")}${pos ? ` ${pos}` : ""}`, "", `  ${topic.summary}`, ""];
    const flags = Object.entries(topic.flags);
    if (flags.length) {
      lines.push("options:");
      const width = Math.max(...flags.map(([n, f]) => n.length + (f.value ? f.value.length + 1 : 0))) + 4;
      for (const [n, f] of flags) lines.push(`  ${`--${n}${f.value ? ` ${f.value}` : ""}`.padEnd(width)} ${f.help}`);
    }
    if (topic.notes?.length) lines.push("", ...topic.notes.map((n) => `  ${n}`));
    return lines.join("\n");
  }
  const list = group ? COMMANDS.filter((c) => c.path[0] === group) : COMMANDS;
  const width = Math.max(...list.map((c) => c.path.join(" ").length)) + 2;
  return [
    "humanish — synthetic-user studies with verifiable evidence",
    "",
    "usage: humanish <command> [options]   (every command takes --help; most take --json)",
    "",
    "commands:",
    ...list.map((c) => `  ${c.path.join(" ").padEnd(width)} ${c.summary}`),
    "",
    "start: humanish lab run default          (a study on the embedded jq lab: live when Docker is usable, else a dry run)",
  ].join("\n");
}
