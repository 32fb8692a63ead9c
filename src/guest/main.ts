/**
 * Stand-alone entry of the guest agent, for building the guest binary when this process is not
 * the compiled humanish CLI (`bun build --compile src/guest/main.ts`). Accepts the same argv as
 * the CLI: `humanish guest serve`, and `humanish guest bench-capture …` (bench baseline only).
 */
import { runGuestCaptureBench } from "./capture-bench.ts";
import { runGuestServe } from "./serve.ts";

const args = process.argv.slice(2);
if (args[0] === "guest" && args[1] === "serve" && args.length === 2) {
  process.exit(await runGuestServe());
} else if (args[0] === "guest" && args[1] === "bench-capture") {
  process.exit(await runGuestCaptureBench(args.slice(2)));
} else {
  process.stderr.write("usage: humanish guest serve\ncode: HUMANISH_USAGE\n");
  process.exit(1);
}
