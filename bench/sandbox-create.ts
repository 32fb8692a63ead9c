/**
 * Bench: Docker sandbox create → first exec output, against
 * `docker run --rm <same image> true` through the docker CLI, in the same process, interleaved over
 * several rounds. Prints per-round ms, medians and the ratio (goal ≤ 1.2×). Release time is measured
 * and printed separately (it is not part of "create → first output").
 *
 * Usage: bun bench/sandbox-create.ts [--rounds N] [--image TAG]
 * Needs a Docker engine and the sandbox image (`bash scripts/setup-images.sh`).
 */
import { createDockerClient } from "../src/docker/index.ts";
import { recipeTag } from "../src/runtime/images.ts";
import { sandboxRecipe } from "../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../src/sandbox/index.ts";
import { emitFigures, figure } from "./lib/figures.ts";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const rounds = Number(arg("--rounds", "7"));
const image = arg("--image", recipeTag(sandboxRecipe));
const docker = createDockerClient();
const provider = createDockerSandboxProvider({ docker });
const runId = `bench-sandbox-create-${process.pid}`;

await docker.imageInspect(image);

async function ours(): Promise<{ firstOutputMs: number; releaseMs: number }> {
  const t0 = performance.now();
  const sb = await provider.create({ runId, image });
  let first = 0;
  let releaseMs = 0;
  let proof: Awaited<ReturnType<typeof sb.release>>;
  try {
    await sb.exec({
      cmd: ["echo", "ready"],
      onStdout: () => {
        if (first === 0) first = performance.now() - t0;
      },
    });
  } finally {
    const r0 = performance.now();
    proof = await sb.release();
    releaseMs = performance.now() - r0;
  }
  // Checked after the finally so a release failure never masks an exec error.
  if (proof.outcome !== "released") throw new Error(`bench sandbox ${sb.id} not released: ${proof.reason}`);
  if (first === 0) throw new Error("no output from the first exec");
  return { firstOutputMs: first, releaseMs };
}

async function cli(): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn(["docker", "run", "--rm", "--label", "humanish.owner=humanish", "--label", `humanish.run=${runId}`, "--network", "none", image, "true"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  const code = await p.exited;
  if (code !== 0) throw new Error(`docker run failed (${code}): ${await new Response(p.stderr).text()}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// Warm-up (not counted): first touches of the image layers and the CLI binary.
await ours();
await cli();

const a: number[] = [];
const rel: number[] = [];
const b: number[] = [];
for (let i = 0; i < rounds; i++) {
  // Alternate the order so neither side always runs on a warmer engine.
  if (i % 2 === 0) {
    const o = await ours();
    a.push(o.firstOutputMs);
    rel.push(o.releaseMs);
    b.push(await cli());
  } else {
    b.push(await cli());
    const o = await ours();
    a.push(o.firstOutputMs);
    rel.push(o.releaseMs);
  }
  console.log(
    `round ${i + 1}: sandbox create→first output ${a[i]!.toFixed(0)} ms (release ${rel[i]!.toFixed(0)} ms) · docker run --rm true ${b[i]!.toFixed(0)} ms`,
  );
}
const ma = median(a);
const mb = median(b);
console.log(`image ${image}, ${rounds} rounds`);
console.log(`median sandbox create→first exec output: ${ma.toFixed(0)} ms (release afterwards: ${median(rel).toFixed(0)} ms)`);
console.log(`median docker run --rm ${image} true (CLI): ${mb.toFixed(0)} ms`);
console.log(`ratio: ${(ma / mb).toFixed(2)}x (goal <= 1.20x)`);
emitFigures([figure("sandbox create → first exec output vs docker run --rm true (median)", ma, "ms", mb, { maxRatio: 1.2 })]);
