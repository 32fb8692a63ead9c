/**
 * The published adapter contract: a self-contained TypeScript declaration file (`.d.ts`) with
 * the types a product adapter is written against — the run bundle, actor trace, ledgers, cost
 * lines, the adapter's own result blocks, the scoring context and the hook signatures — printed
 * by `humanish types` so an adapter needs no checkout of humanish.
 *
 * It cannot drift from the code: every type is printed from the same zod schema the bundle
 * writer, the verifier and the seam check against (through zod's JSON Schema export), so the
 * declarations are the schemas' output types. Pure: no I/O.
 */
import { z } from "zod";
import {
  ActorRuntimeSchema,
  ActorTraceSchema,
  ArtifactEntrySchema,
  CleanupProofSchema,
  CommandLogEntrySchema,
  CostLineSchema,
  DesktopGeometrySchema,
  LifecycleEventSchema,
  NoSpendProofSchema,
  ReviewSchema,
  RunBundleSchema,
  RunCostSummarySchema,
  RunOutcomeSchema,
  RunParticipantSchema,
  StudySchema,
  StudySeatSchema,
  TaskResultSchema,
  TerminalCostLedgerSchema,
  TerminalLedgersSchema,
  TokenUsageSchema,
  TraceItemSchema,
} from "../bundle/schemas.ts";
import { JsonValueSchema } from "../bundle/schemas-adapter.ts";
import { VERSION } from "../version.ts";
import {
  ArtifactResultSchema,
  FeedbackResultSchema,
  RunAdapterArtifactSchema,
  RunAdapterScoreSchema,
  RunFeedbackCandidateSchema,
  ScoreResultSchema,
  ScorerProvenanceSchema,
  ScoringContextSchema,
  ScoringDesktopLedgerSchema,
  ScoringModelLedgerSchema,
  ScoringParticipantSchema,
} from "./shapes.ts";

/** Every published type: its name and the schema it is printed from (a name is used wherever the schema is). */
export const CONTRACT_TYPES: readonly (readonly [name: string, schema: z.ZodType])[] = [
  ["JsonValue", JsonValueSchema],
  ["CostLine", CostLineSchema],
  ["RunCostSummary", RunCostSummarySchema],
  ["CleanupProof", CleanupProofSchema],
  ["LifecycleEvent", LifecycleEventSchema],
  ["TokenUsage", TokenUsageSchema],
  ["ActorRuntime", ActorRuntimeSchema],
  ["TraceItem", TraceItemSchema],
  ["ActorTrace", ActorTraceSchema],
  ["CommandLogEntry", CommandLogEntrySchema],
  ["TerminalCostLedger", TerminalCostLedgerSchema],
  ["NoSpendProof", NoSpendProofSchema],
  ["TerminalLedgers", TerminalLedgersSchema],
  ["ArtifactEntry", ArtifactEntrySchema],
  ["DesktopGeometry", DesktopGeometrySchema],
  ["RunParticipant", RunParticipantSchema],
  ["TaskResult", TaskResultSchema],
  ["Review", ReviewSchema],
  ["RunOutcome", RunOutcomeSchema],
  ["StudySeat", StudySeatSchema],
  ["Study", StudySchema],
  ["RunAdapterScore", RunAdapterScoreSchema],
  ["RunFeedbackCandidate", RunFeedbackCandidateSchema],
  ["RunAdapterArtifact", RunAdapterArtifactSchema],
  ["ScorerProvenance", ScorerProvenanceSchema],
  ["RunBundle", RunBundleSchema],
  ["ScoringModelLedger", ScoringModelLedgerSchema],
  ["ScoringDesktopLedger", ScoringDesktopLedgerSchema],
  ["ScoringParticipant", ScoringParticipantSchema],
  ["ScoringContext", ScoringContextSchema],
  ["ScoreResult", ScoreResultSchema],
  ["FeedbackResult", FeedbackResultSchema],
  ["ArtifactResult", ArtifactResultSchema],
];

/** One JSON Schema node, as zod's export writes it (only the keywords the printer reads). */
interface Node {
  $ref?: string;
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  const?: unknown;
  enum?: unknown[];
  type?: string | string[];
  items?: Node;
  prefixItems?: Node[];
  properties?: Record<string, Node>;
  required?: string[];
  additionalProperties?: boolean | Node;
  $defs?: Record<string, Node>;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The TypeScript name a `$ref` points at (registered names as is, shared definitions as `Shared_<n>`). */
function refName(ref: string): string {
  const shared = /^__shared#\/\$defs\/(.+)$/.exec(ref);
  return shared ? `Shared_${shared[1]!.replace(/[^A-Za-z0-9_]/g, "_")}` : ref;
}

function wrap(t: string): string {
  return /^[A-Za-z0-9_."'[\]{}<>]+$/.test(t) || t.startsWith("{") ? t : `(${t})`;
}

/** Print one node as a TypeScript type at indentation `ind`. */
export function printNode(n: Node, ind = ""): string {
  if (n.$ref !== undefined) return refName(n.$ref);
  const alts = n.anyOf ?? n.oneOf;
  if (alts) return [...new Set(alts.map((a) => printNode(a, ind)))].join(" | ");
  if (n.allOf) return n.allOf.map((a) => wrap(printNode(a, ind))).join(" & ");
  if ("const" in n) return JSON.stringify(n.const);
  if (n.enum) return n.enum.map((v) => JSON.stringify(v)).join(" | ");
  const types = Array.isArray(n.type) ? n.type : n.type ? [n.type] : [];
  if (types.length > 1) return types.map((t) => printNode({ ...n, type: t }, ind)).join(" | ");
  switch (types[0]) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (n.prefixItems) return `[${n.prefixItems.map((p) => printNode(p, ind)).join(", ")}]`;
      return `${wrap(n.items ? printNode(n.items, ind) : "unknown")}[]`;
    case "object":
      return printObject(n, ind);
    default:
      return "unknown";
  }
}

function printObject(n: Node, ind: string): string {
  const inner = `${ind}  `;
  const required = new Set(n.required ?? []);
  const lines = Object.entries(n.properties ?? {}).map(
    ([k, v]) => `${inner}${IDENT.test(k) ? k : JSON.stringify(k)}${required.has(k) ? "" : "?"}: ${printNode(v, inner)};`,
  );
  const extra = n.additionalProperties;
  if (extra === true || (typeof extra === "object" && Object.keys(extra).length === 0)) lines.push(`${inner}[key: string]: unknown;`);
  else if (typeof extra === "object") lines.push(`${inner}[key: string]: ${printNode(extra, inner)};`);
  else if (extra === undefined && !n.properties) lines.push(`${inner}[key: string]: unknown;`);
  return lines.length ? `{\n${lines.join("\n")}\n${ind}}` : "{}";
}

/** The hook signatures and helpers, written against the printed types. */
const HOOKS = `/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** \`T\` with every property, at every depth, read-only: the context is deep-frozen at run time. */
export type DeepReadonly<T> = T extends (infer E)[] ? readonly DeepReadonly<E>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** \`score(ctx)\`: the adapter's judgement of the run. \`status: "fail"\` fails the run result. */
export type ScoreHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<ScoreResult>;
/** \`deriveFeedback(ctx)\`: candidates the product team may act on; a malformed one is dropped with a warning. */
export type DeriveFeedbackHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<FeedbackResult[]>;
/** \`deriveArtifacts(ctx)\`: files to add under \`adapter/<namespace>/\`; a malformed one is dropped with a warning. */
export type DeriveArtifactsHook = (ctx: DeepReadonly<ScoringContext>) => Awaitable<ArtifactResult[]>;

/** What a scorer module (\`review.scorer.ref\` or \`--scorer\`) exports: at least one hook. */
export interface ScorerModule {
  score?: ScoreHook;
  deriveFeedback?: DeriveFeedbackHook;
  deriveArtifacts?: DeriveArtifactsHook;
}
`;

/**
 * The declaration file's text: a header, every {@link CONTRACT_TYPES} entry as an exported type
 * alias, then the hook signatures. Deterministic for one humanish version.
 */
export function renderContractTypes(): string {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of CONTRACT_TYPES) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, { io: "output", uri: (id) => id, unrepresentable: "any" }) as { schemas: Record<string, Node> };
  const parts = [
    `/**\n * humanish ${VERSION} — the product adapter contract (written by \`humanish types\`; do not edit).\n *\n * A scorer module exports any of \`score\`, \`deriveFeedback\`, \`deriveArtifacts\` (see ScorerModule).\n * Every type below is printed from the schema humanish checks the same value against.\n */`,
  ];
  for (const [id] of CONTRACT_TYPES) {
    if (id === "JsonValue") {
      parts.push("/** Any JSON value. */\nexport type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };");
      continue;
    }
    const node = out.schemas[id];
    if (!node) throw new Error(`contract type ${id} was not exported`);
    parts.push(`export type ${id} = ${printNode(node)};`);
  }
  for (const [name, node] of Object.entries(out.schemas.__shared?.$defs ?? {})) parts.push(`type ${refName(`__shared#/$defs/${name}`)} = ${printNode(node)};`);
  parts.push(HOOKS);
  return `${parts.join("\n\n")}`;
}
