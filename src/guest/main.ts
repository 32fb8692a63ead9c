/**
 * Stand-alone entry of the guest agent, for building the guest binary when this process is not
 * the compiled humanish CLI (`bun build --compile src/guest/main.ts`). Accepts the same argv as
 * the CLI: `humanish guest serve`, and `humanish guest bench-capture …` / `humanish guest bench-bare …`
 * (bench baselines only).
 */
import { runGuestBareBench } from "./bare-bench.ts";
import { runGuestCaptureBench } from "./capture-bench.ts";
import { runGuestServe } from "./serve.ts";

const args = process.argv.slice(2);
if (args[0] === "guest" && args[1] === "serve" && args.length === 2) {
  process.exit(await runGuestServe());
} else if (args[0] === "guest" && args[1] === "bench-capture") {
  process.exit(await runGuestCaptureBench(args.slice(2)));
} else if (args[0] === "guest" && args[1] === "bench-bare") {
  process.exit(await runGuestBareBench(args.slice(2)));
} else {
  process.stderr.write("usage: humanish guest serve\ncode: HUMANISH_USAGE\n");
  process.exit(1);
}
