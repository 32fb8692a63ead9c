/**
 * Labs compiled into the humanish binary, so `humanish lab run default` works on a fresh
 * machine with no lab files. The YAML text is imported as text (`with { type: "text" }`), so
 * `bun build --compile` embeds the exact committed bytes.
 */
import codexFirstContact from "../../labs/codex-first-contact.yaml" with { type: "text" };
import jqFirstContact from "../../labs/jq-first-contact.yaml" with { type: "text" };
import jqFirstContactSeats from "../../labs/jq-first-contact-seats.yaml" with { type: "text" };
import todomvcComputerUse from "../../labs/todomvc-computer-use.yaml" with { type: "text" };
import todomvcFirstRun from "../../labs/todomvc-first-run.yaml" with { type: "text" };
import todomvcFirstRunSeats from "../../labs/todomvc-first-run-seats.yaml" with { type: "text" };

/** One embedded lab: its id, the committed file it came from, and its text. */
export interface EmbeddedLab {
  id: string;
  /** Repository path of the source file, e.g. `labs/jq-first-contact.yaml`. */
  file: string;
  text: string;
}

function text(v: unknown, file: string): string {
  if (typeof v !== "string") throw new TypeError(`embedded lab ${file} was not imported as text`);
  return v;
}

/** Every embedded lab, by id. */
export const EMBEDDED_LABS: readonly EmbeddedLab[] = [
  { id: "jq-first-contact", file: "labs/jq-first-contact.yaml", text: text(jqFirstContact, "labs/jq-first-contact.yaml") },
  { id: "codex-first-contact", file: "labs/codex-first-contact.yaml", text: text(codexFirstContact, "labs/codex-first-contact.yaml") },
  { id: "todomvc-first-run", file: "labs/todomvc-first-run.yaml", text: text(todomvcFirstRun, "labs/todomvc-first-run.yaml") },
  { id: "jq-first-contact-seats", file: "labs/jq-first-contact-seats.yaml", text: text(jqFirstContactSeats, "labs/jq-first-contact-seats.yaml") },
  {
    id: "todomvc-first-run-seats",
    file: "labs/todomvc-first-run-seats.yaml",
    text: text(todomvcFirstRunSeats, "labs/todomvc-first-run-seats.yaml"),
  },
  { id: "todomvc-computer-use", file: "labs/todomvc-computer-use.yaml", text: text(todomvcComputerUse, "labs/todomvc-computer-use.yaml") },
];

/** Aliases for embedded labs: `default` is the jq lab (the quick start's study). */
export const EMBEDDED_ALIASES: Readonly<Record<string, string>> = { default: "jq-first-contact" };

/** The embedded lab for `id` (aliases resolved), or undefined. */
export function findEmbeddedLab(id: string): EmbeddedLab | undefined {
  const target = EMBEDDED_ALIASES[id] ?? id;
  return EMBEDDED_LABS.find((l) => l.id === target);
}
