/**
 * `humanish types [--out FILE]` — the product adapter contract as a self-contained `.d.ts`
 * (src/adapters/contract.ts), so an adapter can be type-checked without a humanish checkout.
 */
import { relative, resolve } from "node:path";
import { renderContractTypes } from "../../adapters/contract.ts";
import { writeUserFileSync } from "../../bundle/safe-write.ts";
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, strFlag } from "./context.ts";

/**
 * Without `--out`, print the declarations (human mode) or carry them as `types` (`--json`).
 * With `--out FILE` (relative to `--cwd`), write them there; an older copy is replaced only
 * with `--force`, and never through a symlink or into a FIFO.
 * @throws HumanishError HUMANISH_OUTPUT_EXISTS / HUMANISH_OUTPUT_UNSAFE (see src/bundle/safe-write.ts),
 *         HUMANISH_TYPES_WRITE_FAILED when the file cannot be written
 */
export async function typesCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const text = renderContractTypes();
  const bytes = Buffer.byteLength(text, "utf8");
  const digest = sha256Hex(text);
  const out = strFlag(ctx, "out");
  if (out === undefined) {
    // The printer ends human output with a newline; the text already ends with one, so stdout gets the same bytes as --out.
    return { result: { schema: ctx.spec.schema, ok: true, version: VERSION, out: null, bytes, sha256: digest, types: text }, human: text.replace(/\n$/, "") };
  }
  if (!out.endsWith(".d.ts")) {
    throw new HumanishError("HUMANISH_TYPES_WRITE_FAILED", `--out ${JSON.stringify(out)} must name a .d.ts file`, { next: "pass e.g. --out humanish.d.ts" });
  }
  const abs = resolve(ctx.cwd, out);
  writeUserFileSync(abs, text, { force: ctx.flags.force === true, label: `--out ${out}`, flag: "--out", codes: { failed: "HUMANISH_TYPES_WRITE_FAILED" } });
  const shown = relative(ctx.cwd, abs) || out;
  return {
    result: { schema: ctx.spec.schema, ok: true, version: VERSION, out: shown, bytes, sha256: digest },
    human: `wrote ${shown} (${bytes} bytes): the humanish ${VERSION} adapter contract; import its types with \`import type { ScorerModule } from "./${shown
      .split("/")
      .pop()!
      .replace(/\.d\.ts$/, "")}"\``,
  };
}
