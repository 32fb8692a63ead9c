/**
 * What a terminal bundle says the lab declared, held against the declaration itself where the
 * declaration is known: a lab compiled into humanish (`embedded:<id>`) whose text has the
 * SHA-256 the bundle records. Today that is the runtime key channel (`execution.runtimeAuth`,
 * default `openai-env`), which a dry run records in its `terminal-lab.credentials.declared`
 * event. A lab file outside the binary is not in the bundle, so nothing is compared for it.
 */
import { parse } from "yaml";
import { sha256Hex } from "../../bytes/sha256.ts";
import { EMBEDDED_LABS } from "../../lab/embedded.ts";
import type { RunBundle } from "../schemas.ts";

/** The key channel a lab text declares, or null when the text is not a lab with an `execution` map. */
function declaredChannel(text: string): "openai-env" | "openai-egress" | null {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return null;
  }
  const execution = doc && typeof doc === "object" ? (doc as { execution?: unknown }).execution : undefined;
  if (!execution || typeof execution !== "object") return null;
  const auth = (execution as { runtimeAuth?: unknown }).runtimeAuth;
  return auth === "openai-egress" ? "openai-egress" : auth === undefined || auth === "openai-env" ? "openai-env" : null;
}

/** The embedded lab the bundle ran, when its text is exactly the one compiled in. */
function embeddedText(b: RunBundle): string | null {
  const ref = b.lab.source.ref;
  if (!ref.startsWith("embedded:")) return null;
  const lab = EMBEDDED_LABS.find((l) => l.id === ref.slice("embedded:".length));
  return lab && sha256Hex(lab.text) === b.lab.source.sha256 ? lab.text : null;
}

/**
 * The recorded key channel against the declared one: `compared` is false when either is
 * unknown (then there are no problems). The channel is read from `runtime key channel
 * <channel>` in the credentials event.
 */
export function declaredChannelCheck(b: RunBundle): { compared: boolean; problems: string[] } {
  const event = b.lifecycle.find((e) => e.event === "terminal-lab.credentials.declared");
  const recorded = event ? /runtime key channel (openai-env|openai-egress)\b/.exec(event.message)?.[1] : undefined;
  const text = recorded ? embeddedText(b) : null;
  const declared = text === null ? null : declaredChannel(text);
  if (declared === null) return { compared: false, problems: [] };
  if (declared === recorded) return { compared: true, problems: [] };
  return {
    compared: true,
    problems: [`terminal-lab.credentials.declared records key channel ${recorded}, but lab ${b.lab.source.ref} declares execution.runtimeAuth ${declared}`],
  };
}
