/**
 * The command table: every command path, its positional arguments and flags. `argv.ts` parses
 * against it with `node:util` parseArgs (strict), so an unknown command or flag is a usage
 * error (exit 1) with a did-you-mean. Flag names follow the upstream CLI's own spelling.
 */

/** One flag: a boolean switch or a string value. */
export interface FlagSpec {
  type: "boolean" | "string";
  /** One-line help text. */
  help: string;
  /** Value placeholder in help, e.g. `ID`. */
  value?: string;
  /**
   * A string flag whose value may be left out: `--flag` alone (or followed by a word that is not
   * a number) means this value. Only a number is ever taken as its value from the next argument.
   */
  bareValue?: string;
}

/** One leaf command. */
export interface CommandSpec {
  /** Words of the command, e.g. `["lab", "run"]`. */
  path: string[];
  summary: string;
  /** Positional argument names (`<lab>` required, `[lab]` optional). */
  positionals: { name: string; required: boolean }[];
  flags: Record<string, FlagSpec>;
  /** Lines of a paragraph printed under the options in `--help` (rules a flag's one line cannot state). */
  notes?: string[];
  /** Result schema id printed with `--json`. */
  schema: string;
  /**
   * Whether the orphan sweep (release of containers and host processes whose controller died)
   * runs before the command. True only for commands that create resources (containers, app
   * servers, images); read-only commands never wait on the engine, so an unresponsive
   * `DOCKER_HOST` cannot slow `verify` or `runs`.
   */
  sweep: boolean;
  /**
   * `trap`: the command observes `ctx.signal`, finishes what it must, and the CLI then exits
   * 130/143 (src/cli/interrupt.ts). `own`: the command handles SIGINT/SIGTERM itself (studies and
   * servers). Absent: nothing to clean up, the signal's default action ends it.
   */
  interrupts?: "trap" | "own";
}

const json: Record<string, FlagSpec> = { json: { type: "boolean", help: "print exactly one JSON document on stdout" } };
const cwd: Record<string, FlagSpec> = { cwd: { type: "string", value: "DIR", help: "project directory (default .)" } };
const envFile: Record<string, FlagSpec> = {
  "env-file": { type: "string", value: "FILE", help: "load env vars for this invocation only (never persisted)" },
};
const run: Record<string, FlagSpec> = { run: { type: "string", value: "ID", help: "run id or `latest` (default latest)" } };

/** Every command humanish knows. */
export const COMMANDS: CommandSpec[] = [
  {
    path: ["lab", "list"],
    summary: "list the labs of this project and the embedded ones",
    positionals: [],
    flags: { ...cwd, ...json },
    schema: "humanish.lab-list-result.v1",
    sweep: false,
  },
  {
    path: ["lab", "inspect"],
    summary: "validate a lab and show its resolved config and warnings",
    positionals: [{ name: "lab", required: true }],
    flags: { ...cwd, ...json },
    schema: "humanish.lab-inspect-result.v1",
    sweep: false,
  },
  {
    path: ["lab", "run"],
    summary: "run a study on a lab and write a verified run bundle",
    positionals: [{ name: "lab", required: true }],
    flags: {
      "dry-run": { type: "boolean", help: "contract-only run: no engine, key, network or spend (always wins)" },
      live: { type: "boolean", help: "run for real (a lab with scenario.mode: live runs live without it)" },
      "run-id": { type: "string", value: "ID", help: "run id to use (refused when it exists)" },
      count: { type: "string", value: "N", help: "run N seats (1–16) instead of the lab's actors[0].count" },
      "rerun-failed-from": {
        type: "string",
        value: "RUN",
        help: "continue a study: run only the seats of RUN (an id or latest) that failed as a harness, as a new run linked to it",
      },
      "rerun-which": {
        type: "string",
        value: "harness|not-reached",
        help: "with --rerun-failed-from: harness (default) or not-reached (every seat that did not reach the goal)",
      },
      scorer: {
        type: "string",
        value: "PATH",
        help: "product adapter module (.ts/.mts/.js/.mjs/.cjs, inside the project) instead of the lab's review.scorer.ref",
      },
      watch: {
        type: "string",
        value: "[PORT]",
        bareValue: "0",
        help: "serve the live Observer page on 127.0.0.1 (any free port, or PORT); its URL goes to stderr",
      },
      ...envFile,
      ...cwd,
      ...json,
    },
    notes: [
      "mode: --dry-run always wins, then --live; otherwise a lab runs in its scenario.mode, except that",
      "the embedded default lab (`lab run default` with no project lab named default) runs live when a",
      "Docker engine is usable (socket present, permission, /_ping answers, local image present or built",
      "now) and falls back to the dry run with one line on stderr saying why; --json carries the mode",
      "and modeReason {code, message}.",
      "scorer: a declared scorer module (review.scorer.ref or --scorer) is imported, on a dry run too (where",
      "no hook runs), in a sandbox container of its own (no network, no home, a copy of its folder only);",
      "with no usable Docker engine it is refused unless HUMANISH_ALLOW_UNCONFINED_SCORER=1 (then it runs",
      "as your user and can read your files and keys; the bundle records that).",
      "continue: --rerun-failed-from RUN runs again only RUN's seats that failed as a harness (with",
      "--rerun-which not-reached: every seat that did not reach the goal); RUN must verify and be a live",
      "run of this lab with the same lab text; run.json records continues {runId, runJsonSha256}.",
    ],
    schema: "humanish.lab-run-result.v1",
    sweep: true,
    interrupts: "own",
  },
  {
    path: ["watch"],
    summary: "serve the live Observer page of a run (default the latest) on 127.0.0.1, from its run directory",
    positionals: [{ name: "run", required: false }],
    flags: { port: { type: "string", value: "PORT", help: "port (default 0 = any free port)" }, ...cwd, ...json },
    notes: [
      "The page follows the run directory as another process writes it (a `lab run` elsewhere), and shows a",
      "finished run as it ended, with a link to its report. Ctrl+C stops it.",
    ],
    schema: "humanish.watch-result.v1",
    sweep: false,
  },
  { path: ["runs"], summary: "list runs, newest first", positionals: [], flags: { ...cwd, ...json }, schema: "humanish.runs-result.v1", sweep: false },
  {
    path: ["runs", "compare"],
    summary: "compare two verified runs of one lab: reach rates per task, a Fisher exact test, cost and time",
    positionals: [
      { name: "a", required: true },
      { name: "b", required: true },
    ],
    flags: {
      "allow-different-labs": { type: "boolean", help: "compare runs of different labs anyway (the result notes it)" },
      html: { type: "string", value: "FILE", help: "also write the comparison as a self-contained HTML page" },
      force: { type: "boolean", help: "replace an existing --html file (never through a symlink)" },
      ...cwd,
      ...json,
    },
    notes: [
      "A is the run before, B the run after; each is a run id, `latest`, or `latest~N` (N runs older than latest",
      "in `humanish runs`). Both must verify. A difference counts as distinguishable only when the two-sided",
      'Fisher exact test gives p < 0.05; otherwise it reads "not distinguishable at these sample sizes".',
    ],
    schema: "humanish.runs-compare-result.v1",
    sweep: false,
  },
  {
    path: ["verify"],
    summary: "verify a run bundle fail-closed (exit 0 iff ok)",
    positionals: [],
    flags: {
      ...run,
      trust: {
        type: "string",
        value: "KEYS",
        help: "also trust these signers (comma-separated): a public key, an ed25519: fingerprint, or a file holding one",
      },
      ...cwd,
      ...json,
    },
    schema: "humanish.verify-result.v1",
    sweep: false,
  },
  {
    path: ["export"],
    summary: "export each seat of a verified run as a trajectory others read (ATIF v1.4)",
    positionals: [],
    flags: {
      ...run,
      format: { type: "string", value: "atif", help: "trajectory format (required; atif = Harbor's ATIF v1.4)" },
      out: { type: "string", value: "DIR", help: "output directory (default .humanish/exports/<runId>/atif)" },
      force: { type: "boolean", help: "replace trajectory files already there (never through a symlink)" },
      ...cwd,
      ...json,
    },
    notes: [
      "The run must verify; every file read is checked against its listed SHA-256. One file per seat,",
      "<participantId>.trajectory.json, scrubbed of secret values and shapes and checked by our own ATIF validator.",
    ],
    schema: "humanish.export-result.v1",
    sweep: false,
    interrupts: "trap",
  },
  {
    path: ["keys"],
    summary: "show your bundle-signing public key and fingerprint (creates the key pair on first use)",
    positionals: [],
    flags: { ...json },
    schema: "humanish.keys-result.v1",
    sweep: false,
  },
  {
    path: ["types"],
    summary: "print (or write with --out) the .d.ts an adapter's scorer module types against",
    positionals: [],
    flags: {
      out: { type: "string", value: "FILE", help: "write the declarations to FILE (a .d.ts, relative to --cwd)" },
      force: { type: "boolean", help: "replace an existing --out file (never through a symlink)" },
      ...cwd,
      ...json,
    },
    schema: "humanish.types-result.v1",
    sweep: false,
  },
  {
    path: ["report"],
    summary: "write the run's self-contained HTML report",
    positionals: [],
    flags: { ...run, open: { type: "boolean", help: "open the report in a browser" }, ...cwd, ...json },
    schema: "humanish.report-result.v1",
    sweep: false,
  },
  {
    path: ["analyze"],
    summary: "find what went wrong in a verified run and why, citing its evidence (one model request)",
    positionals: [],
    flags: {
      ...run,
      provider: { type: "string", value: "openai|codex", help: "who answers (default openai; no fallback between them)" },
      "max-cost": { type: "string", value: "USD", help: "most the request may cost by the admission estimate (required for openai, also with --dry-run)" },
      model: { type: "string", value: "M", help: "model id (default gpt-5.1 for openai)" },
      question: { type: "string", value: "Q", help: "an extra question for the reviewer" },
      "dry-run": { type: "boolean", help: "select the evidence and print the estimate; send nothing, need no key" },
      "timeout-ms": { type: "string", value: "N", help: "whole-request timeout in ms (default and most 600000)" },
      "max-output-tokens": { type: "string", value: "N", help: "output allowance, 256–32768 (default 32768 when it fits --max-cost, else 16384)" },
      rerun: { type: "boolean", help: "make a new attempt even when an identical one exists" },
      ...cwd,
      ...json,
    },
    notes: [
      "Only a bundle that passes `humanish verify` is analysed, and only a live run. The estimate is the",
      "worst case (full output allowance at the model's highest input rate); over --max-cost nothing is sent.",
      "Each attempt is stored as analysis/<NNNN>/ in the bundle (listed, signed, re-checked by verify);",
      "a refused, incomplete or invalid answer, or one whose every finding was rejected, is kept as diagnostics and exits 2.",
    ],
    schema: "humanish.analyze-result.v1",
    sweep: false,
    interrupts: "trap",
  },
  {
    path: ["analyze", "show"],
    summary: "print the latest analysis of a run (exit 2 when it was rejected or failed)",
    positionals: [],
    flags: { ...run, ...cwd, ...json },
    schema: "humanish.analysis-show-result.v1",
    sweep: false,
  },
  {
    path: ["serve"],
    summary: "serve the run library (every run's report) on 127.0.0.1",
    positionals: [],
    flags: {
      port: { type: "string", value: "PORT", help: "port (default 0 = any free port)" },
      host: { type: "string", value: "HOST", help: "bind address; only loopback is allowed (default 127.0.0.1)" },
      ...cwd,
      ...json,
    },
    schema: "humanish.serve-result.v1",
    sweep: false,
    interrupts: "own",
  },
  {
    path: ["doctor"],
    summary: "check this machine and project (engine, images, keys by name, a lab)",
    positionals: [],
    flags: { lab: { type: "string", value: "LAB", help: "also validate this lab and its route's prerequisites" }, ...envFile, ...cwd, ...json },
    schema: "humanish.doctor-result.v1",
    sweep: false,
  },
  {
    path: ["runtime", "status"],
    summary: "show the local runtime: engine and images (never builds or downloads)",
    positionals: [],
    flags: { ...json },
    schema: "humanish.runtime-result.v1",
    sweep: false,
  },
  {
    path: ["runtime", "setup"],
    summary: "build the local images from their recipes, or load one from a verified archive",
    positionals: [],
    flags: {
      "from-archive": { type: "string", value: "FILE", help: "load an image archive instead of building" },
      sha256: { type: "string", value: "HEX", help: "expected SHA-256 of the archive (required with --from-archive)" },
      bytes: { type: "string", value: "N", help: "expected byte count of the archive (required with --from-archive)" },
      only: { type: "string", value: "sandbox|guest", help: "set up only this image (default both)" },
      ...json,
    },
    schema: "humanish.runtime-result.v1",
    sweep: true,
  },
  {
    path: ["runtime", "prune"],
    summary: "remove humanish images that are no longer current (never one a container uses)",
    positionals: [],
    flags: {
      "dry-run": { type: "boolean", help: "list what would be removed and the bytes it would free; remove nothing" },
      ...json,
    },
    schema: "humanish.runtime-prune-result.v1",
    sweep: true,
  },
  {
    path: ["init"],
    summary: "create a lab with an interactive wizard (or --yes for a template)",
    positionals: [],
    flags: {
      yes: { type: "boolean", help: "no questions: write the template lab" },
      template: { type: "string", value: "terminal|browser|computer-use", help: "template for --yes (default terminal)" },
      id: { type: "string", value: "ID", help: "lab id (default from the template)" },
      force: { type: "boolean", help: "overwrite an existing lab file" },
      ...cwd,
      ...json,
    },
    schema: "humanish.init-result.v1",
    sweep: false,
  },
  {
    path: ["env", "serve"],
    summary: "serve the Terminus-style terminal environment (OpenEnv HTTP/WebSocket/MCP)",
    positionals: [],
    flags: {
      backend: { type: "string", value: "docker|e2b", help: "sandbox backend (default docker)" },
      host: { type: "string", value: "HOST", help: "bind address (default 127.0.0.1)" },
      port: { type: "string", value: "PORT", help: "port (default 8000)" },
      "max-concurrent": { type: "string", value: "N", help: "max concurrent sessions, a whole number ≥ 1 (default MAX_CONCURRENT_ENVS or 4)" },
      "session-timeout-ms": { type: "string", value: "MS", help: "idle session timeout before the reaper frees it" },
      "sandbox-timeout-ms": { type: "string", value: "MS", help: "sandbox lifetime (default 300000)" },
      "command-timeout-ms": { type: "string", value: "MS", help: "per-command timeout" },
      image: { type: "string", value: "IMAGE", help: "sandbox image (default the humanish sandbox image)" },
      network: { type: "string", value: "none|bridge", help: "sandbox network (default none)" },
      ...envFile,
      json: { type: "boolean", help: "after shutdown, print one JSON document with the url and every release outcome" },
    },
    schema: "humanish.env-serve-result.v1",
    sweep: true,
    interrupts: "own",
  },
  {
    path: ["guest", "serve"],
    summary: "(inside the browser guest) serve browser control over a Unix socket",
    positionals: [],
    flags: {
      "io-dir": { type: "string", value: "DIR", help: "private directory holding config.json and the control/app sockets" },
    },
    schema: "humanish.guest-serve-result.v1",
    sweep: false,
  },
];

/** Top-level words, for did-you-mean on an unknown command. */
export function commandWords(): string[] {
  return [...new Set(COMMANDS.map((c) => c.path[0]!))];
}
