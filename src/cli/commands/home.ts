/**
 * The home screen: `humanish` with no arguments on a terminal. A `@clack/prompts` menu lists the
 * labs (`lab list`'s listing) with their readiness (`doctor --lab`'s own checks: images, keys by
 * name, engine), and runs the chosen action through the same command path as typing it:
 * `lab run <lab> --watch` (live progress and the Observer URL), `report` (the latest run's report
 * path), or `init`. Off a terminal the CLI prints help instead and never gets here.
 */
import * as p from "@clack/prompts";
import { errorMessage } from "../../errors.ts";
import { listLabs } from "../../lab/index.ts";
import type { CliIO } from "../output.ts";
import { COMMANDS } from "../spec.ts";
import type { CommandContext } from "./context.ts";
import { doctorCommand } from "./runtime.ts";

/** Runs argv through the CLI (the caller passes its own driver, so a menu item IS the command). */
export type Dispatch = (argv: string[]) => Promise<number>;

/** A lab's readiness in one phrase, from the doctor's required checks. */
async function readiness(id: string, cwd: string, io: CliIO): Promise<string> {
  const spec = COMMANDS.find((c) => c.path.join(" ") === "doctor")!;
  const ctx: CommandContext = { spec, args: {}, flags: { lab: id }, cwd, env: io.env, secrets: [], json: true, io, signal: new AbortController().signal };
  try {
    const out = await doctorCommand(ctx);
    const checks = (out.result as { checks?: { name: string; ok: boolean; required: boolean }[] }).checks ?? [];
    const missing = checks.filter((c) => c.required && !c.ok).map((c) => c.name);
    return missing.length ? `missing: ${missing.join(", ")}` : "ready";
  } catch (e) {
    return `not checked: ${errorMessage(e)}`;
  }
}

/**
 * Shows the menu and runs one choice; returns the exit code of what ran (0 when the menu was
 * left, 130 when it was cancelled).
 */
export async function runHome(cwd: string, io: CliIO, dispatch: Dispatch): Promise<number> {
  p.intro("humanish — synthetic-user studies with verifiable evidence");
  p.log.step("checking labs, images, keys and the engine");
  const labs = (await listLabs(cwd)).filter((l) => !l.shadowedBy);
  const ready = new Map<string, string>();
  for (const l of labs) if (!l.error) ready.set(l.id, await readiness(l.id, cwd, io));
  const choice = await p.select<string>({
    message: "What next?",
    options: [
      ...labs.map((l) => ({
        value: `run:${l.id}`,
        label: `run ${l.id}`,
        hint: `${l.route ?? "invalid"} · ${l.source} · ${l.error ? `✗ ${l.error.message.slice(0, 80)}` : ready.get(l.id)}`,
      })),
      { value: "report", label: "open the latest report" },
      { value: "init", label: "create a lab (init)" },
      { value: "quit", label: "quit" },
    ],
  });
  if (p.isCancel(choice)) {
    p.cancel("nothing was run");
    return 130;
  }
  if (choice === "quit") {
    p.outro("humanish --help lists every command");
    return 0;
  }
  if (choice === "report") {
    p.outro("humanish report --run latest");
    return dispatch(["report", "--run", "latest", "--cwd", cwd]);
  }
  if (choice === "init") {
    p.outro("humanish init");
    return dispatch(["init", "--cwd", cwd]);
  }
  const id = choice.slice("run:".length);
  p.outro(`humanish lab run ${id} --watch`);
  return dispatch(["lab", "run", id, "--watch", "--cwd", cwd]);
}
