/**
 * What an E2B desktop costs: the E2B rate card and time line both E2B lanes share
 * (`sandbox/e2b-rates.ts`), as `desktop-minutes`. Pure. Units: ms, MiB, USD.
 */
import type { CostLine } from "../../bundle/schemas.ts";
import { E2B_RATES, e2bTimeLine } from "../../sandbox/e2b-rates.ts";

/** E2B's compute rates, billed per second while the sandbox runs (the same card as the terminal lane's). */
export const E2B_DESKTOP_RATES = E2B_RATES;

/**
 * The desktop-time line of one seat; unmeasured (`usd: null`) when the resources are unknown or
 * the release was not confirmed (it may then be billed until its E2B timeout).
 */
export function desktopTimeLine(o: Omit<Parameters<typeof e2bTimeLine>[0], "noun">): CostLine {
  return e2bTimeLine({ noun: "desktop", ...o });
}
