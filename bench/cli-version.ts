/**
 * Wall time of the compiled binary's `--version`, against baselines spawned the same
 * way in the same invocation: `/bin/true` (the process-spawn floor), an empty program compiled
 * with the same `bun build --compile` (the runtime's own start-up), and `bun src/cli/main.ts
 * --version` (from source). Prints medians in ms and the ratios. Builds dist/humanish if missing.
 * Usage: bun bench/cli-version.ts [rounds=30]
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emitFigures, figure } from "./lib/figures.ts";

const rounds = Number(process.argv[2] ?? 30);
if (!existsSync("dist/humanish")) {
  const b = Bun.spawnSync([process.execPath, "build.ts"], { stdout: "inherit", stderr: "inherit" });
  if (b.exitCode !== 0) process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), "humanish-bench-"));
writeFileSync(join(dir, "empty.ts"), "process.stdout.write('x\\n');\n");
const empty = join(dir, "empty");
if (
  Bun.spawnSync([process.execPath, "build", "--compile", "--bytecode", join(dir, "empty.ts"), "--outfile", empty], { stdout: "ignore", stderr: "inherit" })
    .exitCode !== 0
)
  process.exit(1);

function time(argv: string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
    out.push(performance.now() - t0);
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${r.exitCode}`);
  }
  return out;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const floor = median(time(["/bin/true"]));
const emptyMs = median(time([empty]));
const binary = median(time(["./dist/humanish", "--version"]));
const source = median(time([process.execPath, "src/cli/main.ts", "--version"]));
console.log(`rounds: ${rounds}`);
console.log(`/bin/true (spawn floor):          ${floor.toFixed(1)} ms`);
console.log(`empty compiled bun program:       ${emptyMs.toFixed(1)} ms`);
console.log(`dist/humanish --version:          ${binary.toFixed(1)} ms  (${(binary / emptyMs).toFixed(2)}× an empty compiled program)`);
console.log(`bun src/cli/main.ts --version:    ${source.toFixed(1)} ms  (binary is ${(source / binary).toFixed(2)}× faster than source)`);
emitFigures([figure("dist/humanish --version vs an empty compiled program", binary, "ms", emptyMs), figure("/bin/true spawn floor", floor, "ms", null)]);
