/**
 * What `doctor --lab` says about a model-driven participant: the endpoint's host (never a URL
 * with credentials), the key by NAME, and whether the rate table prices the model a positive
 * `maxUsd` needs priced. Pure: reads only the env it is given.
 */
import { isHumanishError } from "../errors.ts";
import { MODEL_KEY_NAMES, resolveEndpoint, resolveModelKey } from "./endpoint.ts";
import { rateFor } from "./rates.ts";

/** One doctor row. */
export interface ReadinessRow {
  name: string;
  ok: boolean;
  /** A failing required row fails the doctor. */
  required: boolean;
  message: string;
}

/**
 * Rows for a model seat.
 * @param o.model the model the seat will ask for (declared), or undefined when the runtime picks its own.
 * @param o.maxUsd the seat's cap (null = unset).
 * @param o.runtimeAuth `openai-env` or `openai-egress`.
 */
export function modelReadiness(o: {
  model: string | undefined;
  maxUsd: number | null;
  runtimeAuth: string;
  env: Record<string, string | undefined>;
}): ReadinessRow[] {
  const rows: ReadinessRow[] = [];
  try {
    const ep = resolveEndpoint(o.env);
    rows.push({
      name: "model endpoint",
      ok: true,
      required: true,
      message: `${ep.host} (${ep.source === "default" ? "the SDK default" : "from OPENAI_BASE_URL"}), reached through the humanish model gateway`,
    });
  } catch (e) {
    rows.push({ name: "model endpoint", ok: false, required: true, message: isHumanishError(e) ? e.message : String(e) });
  }
  const key = resolveModelKey(o.env);
  const needKey = o.maxUsd !== 0;
  rows.push({
    name: "model key",
    ok: key !== undefined || !needKey,
    required: needKey,
    message: key
      ? `${key.sourceName} is set; runtimeAuth ${o.runtimeAuth}: ${o.runtimeAuth === "openai-egress" ? "the key stays in the host's gateway" : "the participant's command also holds it"}`
      : `none of ${MODEL_KEY_NAMES.join(", ")} is set${needKey ? "" : " (maxUsd 0: no request leaves, none is needed)"}`,
  });
  const needPrice = o.maxUsd !== null && o.maxUsd > 0;
  if (o.model === undefined) {
    // Nothing to price yet: the runtime picks its model, and each request is priced (or refused
    // under a cap) by the model that request names.
    rows.push({
      name: "model price",
      ok: true,
      required: false,
      message:
        "no model declared: the runtime uses its own default; each request is priced by the model it names, and refused under a cap when that model has no rate",
    });
    return rows;
  }
  const rate = rateFor(o.model);
  rows.push({
    name: "model price",
    ok: rate !== undefined || !needPrice,
    required: needPrice,
    message: rate
      ? `${o.model}: ${rate.inputPerMTok} / ${rate.outputPerMTok} USD per 1M input/output tokens (rates of ${rate.ratesAsOf}, ${rate.source})`
      : `${o.model} has no rate in the table${needPrice ? `: scenario.caps.maxUsd ${o.maxUsd} cannot be enforced for it` : "; its cost will be recorded as null with its token counts"}`,
  });
  return rows;
}
