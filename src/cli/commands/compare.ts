/** `humanish runs compare A B` — two verified runs of one lab side by side. */
import { relative, resolve } from "node:path";
import { defaultTrust } from "../../bundle/index.ts";
import { writeUserFileSync } from "../../bundle/safe-write.ts";
import { compareRunDirs, resolveRunRef } from "../../compare/load.ts";
import { compareText, renderCompareHtml } from "../../report/compare.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, strFlag } from "./context.ts";

/**
 * `runs compare <a> <b> [--allow-different-labs] [--html FILE [--force]]`: A is the run before,
 * B after. Both must verify; `--html` also writes the comparison as a self-contained HTML page
 * (an existing file only with `--force`; never through a symlink or into a FIFO).
 * @throws HumanishError HUMANISH_INVALID_RUN_BUNDLE, HUMANISH_COMPARE_* (see src/compare/load.ts),
 *         HUMANISH_OUTPUT_EXISTS / HUMANISH_OUTPUT_UNSAFE (see src/bundle/safe-write.ts),
 *         HUMANISH_COMPARE_HTML_WRITE_FAILED when the page cannot be written
 */
export async function compareCommand(ctx: CommandContext): Promise<CommandOutcome> {
  // Both positionals are required by the command table, so the parser has set them.
  const dirA = await resolveRunRef(ctx.cwd, ctx.args.a as string);
  const dirB = await resolveRunRef(ctx.cwd, ctx.args.b as string);
  const comparison = await compareRunDirs(dirA, dirB, {
    trust: defaultTrust(ctx.env),
    allowDifferentLabs: ctx.flags["allow-different-labs"] === true,
  });
  const htmlFlag = strFlag(ctx, "html");
  let html: string | undefined;
  if (htmlFlag !== undefined) {
    const path = resolve(ctx.cwd, htmlFlag);
    writeUserFileSync(path, renderCompareHtml(comparison, new Date().toISOString()), {
      force: ctx.flags.force === true,
      label: `--html ${htmlFlag}`,
      flag: "--html",
      codes: { failed: "HUMANISH_COMPARE_HTML_WRITE_FAILED" },
    });
    html = relative(ctx.cwd, path);
  }
  const human = compareText(comparison) + (html ? `\nhtml: ${html}` : "");
  return { result: { schema: ctx.spec.schema, ok: true, comparison, ...(html ? { html } : {}) }, human };
}
