/**
 * Compiles the single `dist/humanish` executable (linux-x64) with the version and git commit
 * embedded. Usage: `bun build.ts [--outfile PATH] [--target bun-linux-x64]`.
 */
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { outfile: { type: "string" }, target: { type: "string" } },
});
const outfile = values.outfile ?? "dist/humanish";
const target = values.target ?? "bun-linux-x64";
const git = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stderr: "ignore" });
const commit = git.exitCode === 0 ? git.stdout.toString().trim() : "unknown";
const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stderr: "ignore" }).stdout.toString().trim() !== "";

const result = await Bun.build({
  entrypoints: ["src/cli/main.ts"],
  compile: { target: target as "bun-linux-x64", outfile },
  minify: true,
  bytecode: true,
  format: "esm",
  sourcemap: "none",
  define: { HUMANISH_BUILD_COMMIT: JSON.stringify(`${commit}${dirty ? "-dirty" : ""}`) },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.error(`built ${outfile} (humanish ${pkg.version}, ${commit}${dirty ? "-dirty" : ""}, ${target})`);
