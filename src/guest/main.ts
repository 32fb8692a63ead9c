/**
 * Stand-alone entry of the guest agent, for building the guest binary before the full CLI
 * exists (`bun build --compile src/guest/main.ts`). Accepts the same argv as the CLI:
 * `humanish guest serve`.
 */
import { runGuestServe } from "./serve.ts";

const args = process.argv.slice(2);
if (args[0] === "guest" && args[1] === "serve" && args.length === 2) {
  process.exit(await runGuestServe());
} else {
  process.stderr.write("usage: humanish guest serve\ncode: HUMANISH_USAGE\n");
  process.exit(1);
}
