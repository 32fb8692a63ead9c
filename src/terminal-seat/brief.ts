/**
 * The participant's brief for a terminal study: persona, product, public surfaces, mission, then the task GOALS in order.
 * Task checks never appear here. A model participant is asked to end with a verdict
 * line carrying this run's nonce, so its claim can be matched to this run only.
 */
import { createHash, randomUUID } from "node:crypto";
import type { TerminalLabConfig } from "../lab/schema.ts";

/** Persona id used when the lab names none. */
export const DEFAULT_PERSONA = "autonomous-terminal-agent";

/** Mission used when the lab gives none. */
export const DEFAULT_MISSION =
  "Discover what this product does from its public surfaces, try it on a small real task, and judge whether it helps. Note anything confusing.";

/** A fresh 12-character verdict nonce. */
export function newNonce(): string {
  return randomUUID().replace(/-/g, "").slice(0, 12);
}

/**
 * The brief text. Always starts with a fixed sentence (never `-`), so it is safe as a single
 * argv element. `seat` is the seat's lane or roster entry (its persona wins over the actor's;
 * its instruction follows the mission). Pure.
 */
export function composeBrief(lab: TerminalLabConfig, nonce: string, seat: { persona?: string; instruction?: string } = {}): string {
  const actor = lab.actors[0];
  const product = lab.subject.product;
  const lines = [
    "You are a participant in a study of a command-line product. Use it the way a new user would.",
    `persona: ${seat.persona ?? actor.persona ?? DEFAULT_PERSONA}`,
    `product: ${product.name}`,
    `public-surfaces: ${product.publicSurfaces.join(" ")}`,
    `mission: ${actor.mission ?? DEFAULT_MISSION}`,
  ];
  // A lane's own instruction is this seat's addition to the shared mission.
  if (seat.instruction) lines.push(`instruction: ${seat.instruction}`);
  const tasks = actor.tasks ?? [];
  if (tasks.length > 0) {
    lines.push("", "Work through these in order:");
    for (const [i, t] of tasks.entries()) lines.push(`${i + 1}. ${t.goal}`);
  }
  lines.push(
    "",
    "Work only from the product's public surfaces (its --help, its man page, the pages above) and the files in your working directory.",
    "Do not clone private repositories and do not look for answer keys or hidden checks.",
    `When you are done, print one final line exactly like: HUMANISH_ACTOR_VERDICT=<passed|blocked|failed> HUMANISH_ACTOR_NONCE=${nonce}`,
  );
  return lines.join("\n");
}

/** `sha256` hex of the brief, first 12 chars (trace `persona.promptDigest`). */
export function briefDigest(brief: string): string {
  return createHash("sha256").update(brief, "utf8").digest("hex").slice(0, 12);
}
