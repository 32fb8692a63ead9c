/**
 * The analysis prompt built from an evidence packet — pure. The instructions are fixed text
 * (the rules a finding must follow) plus the operator's question; the content is the packet in
 * order, each item headed by its evidence id; the output contract is the findings schema as a
 * strict JSON Schema.
 */
import { AnalysisOutputSchema } from "../bundle/index.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { strictJsonSchemaOf } from "../models/structured.ts";
import type { AnalysisPrompt, AnalysisPromptPart } from "./provider.ts";
import type { EvidenceSelection } from "./select.ts";

/** Version of the instructions below; part of the config digest, so changing them makes a new analysis. */
export const PROMPT_VERSION = "humanish-analysis-1";

/** Model-visible name of the output format. */
export const OUTPUT_NAME = "humanish_study_findings";

const RULES = `You review the evidence of a synthetic-user study: participants (scripted programs or AI agents) used a real product, a command-line tool or a web app, and humanish recorded what happened. Report what went wrong for the participants and why, so the team that owns the product can act on it.

Rules:
- Cite evidence only by the ids in the headers of the packet (the text after "### "), exactly as written. Never cite a file path, and never invent an id. Every finding cites at least one id.
- Name participants only by the participant ids listed in run/summary, and tasks only by the task ids listed there.
- kind "observed": what participants did and what the hidden checks, commands, actions, transcripts and screenshots show. An observed finding must cite at least one item whose header says "observed".
- kind "participant_reported": what a participant said (items whose header says "participant": its messages, reasoning and its own account of how it ended). A participant's narration is never evidence that something happened: a claim that only a participant makes is participant_reported, even if it sounds certain.
- kind "harness": humanish or its runtime failed (items whose header says "harness"). A harness failure is never a finding about the product; report it only so it is not mistaken for one.
- A participant giving up, timing out or being blocked is a finding about the product, not a harness failure.
- "reached the goal" counts only what the hidden checks say. A participant that claimed success while the checks say it did not (a "claim vs checks" item) is a finding of its own, kind "observed": the participant believed it succeeded; the checks say it did not — say what it believed and what the product showed.
- severity: "blocker" (stopped a participant from reaching a task's goal), "major" (cost real effort or a wrong result), "minor" (friction the participant recovered from), "info" (worth knowing, no harm seen).
- Order findings by severity, most severe first. Give each a short unique id (f1, f2, …), a title a product team understands, and a concrete recommendation.
- Some evidence did not fit the packet; it is counted at the end. Say in limitations what you could not see, and do not guess about it.`;

/** The instructions: the fixed rules, then the operator's question when one was given. */
export function instructionsFor(question: string | null): string {
  return question ? `${RULES}\n\nThe study's owner also asks: ${question}` : RULES;
}

/** The prompt for `sel` (see the module doc). */
export function buildPrompt(sel: EvidenceSelection, question: string | null): AnalysisPrompt {
  const content: AnalysisPromptPart[] = [];
  let text = "";
  const flush = () => {
    if (text) content.push({ type: "text", text });
    text = "";
  };
  for (const item of sel.items) {
    text += item.text;
    if (item.image) {
      flush();
      content.push({
        type: "image",
        evidenceId: item.ref.id,
        pngBase64: Buffer.from(item.image.png).toString("base64"),
        width: item.image.width,
        height: item.image.height,
      });
    }
  }
  const omittedBy = new Map<string, number>();
  for (const o of sel.omitted) omittedBy.set(o.reason, (omittedBy.get(o.reason) ?? 0) + 1);
  text += sel.omitted.length
    ? `\n### not sent\n${sel.omitted.length} evidence item(s) did not fit this packet (${[...omittedBy].map(([r, n]) => `${n} over ${r.replace(/_/g, " ")}`).join(", ")}); they cannot be cited.\n`
    : "\n### not sent\nevery evidence item of the bundle is in this packet.\n";
  flush();
  return { instructions: instructionsFor(question), content, output: { name: OUTPUT_NAME, jsonSchema: strictJsonSchemaOf(AnalysisOutputSchema, OUTPUT_NAME) } };
}

/** SHA-256 of the prompt: instructions, every part (an image by its bytes' digest), the output contract. */
export function promptDigest(p: AnalysisPrompt): string {
  const parts = p.content.map((c) => (c.type === "text" ? `t:${sha256Hex(c.text)}` : `i:${c.evidenceId}:${sha256Hex(c.pngBase64)}`));
  return sha256Hex([sha256Hex(p.instructions), ...parts, sha256Hex(JSON.stringify(p.output))].join("\n"));
}
