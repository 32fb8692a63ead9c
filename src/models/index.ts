/**
 * `src/models/`: the one place that knows the OpenAI Responses API — the SDK client, the endpoint
 * rule, the dated rate table, usage → cost, admission estimates, and the model gateway (metering,
 * key injection, the spend cap enforced before the request leaves).
 */
export { type AdmissionEstimate, admissionEstimate, MAX_IMAGE_TOKENS, MIN_OUTPUT_GRANT_TOKENS, outputGrant } from "./admission.ts";
export { createModelClient, DEFAULT_MODEL_TIMEOUT_MS } from "./client.ts";
export { DEFAULT_BASE_URL, MODEL_KEY_NAMES, type ModelEndpoint, type ModelKey, resolveEndpoint, resolveModelKey } from "./endpoint.ts";
export {
  checkFunctionPairs,
  type FunctionCall,
  FunctionConversation,
  type FunctionResponse,
  type FunctionSettings,
  type FunctionTool,
  parseFunctionResponse,
} from "./function-calls.ts";
export { admitAll, grantableUsd, type RefusalReason, SpendBudget } from "./gateway/budget.ts";
export { SANDBOX_FORWARDER_SOURCE } from "./gateway/sandbox-forwarder.ts";
export { GATEWAY_SOCKET_NAME, type Gateway, type GatewayLedgerLine, type GatewayOptions, pendingLedgerLine, startGateway } from "./gateway/server.ts";
export { forwarded, ledgerCostLines, ledgerUsd, type ModelCostLine, type ModelLedger } from "./ledger.ts";
export { BUILTIN_RATES_AS_OF, isPriced, type ModelRate, RATE_TABLE, type RateTable, rateFor } from "./rates.ts";
export { checkOutputPairs, pngDataUrl, type ResponseOutput, readResponseOutput } from "./response-output.ts";
export { costOf, parseUsage, type RequestUsage, type UsageCost } from "./usage.ts";
