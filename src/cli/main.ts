#!/usr/bin/env bun
/**
 * The `humanish` entry point (also the compiled single binary's). `--version` is answered
 * before any other module is evaluated, so it costs only the runtime's start-up.
 */
const argv = process.argv.slice(2);
if (argv.length >= 1 && (argv[0] === "--version" || argv[0] === "-v") && argv.every((a, i) => i === 0 || a === "--json")) {
  const { VERSION, BUILD_COMMIT } = await import("../version.ts");
  process.stdout.write(
    argv.includes("--json")
      ? `${JSON.stringify({ schema: "humanish.version-result.v1", ok: true, version: VERSION, commit: BUILD_COMMIT }, null, 2)}\n`
      : `humanish ${VERSION} (${BUILD_COMMIT})\n`,
  );
} else if (argv[0] === "__scorer-child") {
  // Internal (never in help): a lab's scorer runs here, in its own process (src/adapters/child.ts).
  const { runScorerChild } = await import("../adapters/child.ts");
  await runScorerChild(argv.slice(1));
} else {
  const [{ processIO }, { runCli }] = await Promise.all([import("./output.ts"), import("./run.ts")]);
  process.exitCode = await runCli(argv, processIO());
}

export {};
