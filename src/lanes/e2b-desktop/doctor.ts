/**
 * `doctor --lab` for an e2b-desktop lab: the env (E2B_DEBUG off, the key present — by name only)
 * and the desktop template looked up by name. Nothing is created, started or spent. Never throws.
 */
import { isHumanishError } from "../../errors.ts";
import { e2bTemplateExists } from "../../sandbox/e2b.ts";

/** The E2B desktop template a lab without `execution.template` uses (`@e2b/desktop`'s own default). */
export const DEFAULT_E2B_DESKTOP_TEMPLATE = "desktop";

/** One doctor check (no secret in it). */
export interface DesktopDoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  next?: string;
}

/** The checks of an e2b-desktop lab using `template`. */
export async function checkE2BDesktopLab(env: Record<string, string | undefined>, template: string): Promise<DesktopDoctorCheck[]> {
  if (env.E2B_DEBUG !== undefined && env.E2B_DEBUG !== "" && env.E2B_DEBUG !== "false")
    return [
      { name: "e2b-desktop-env", ok: false, detail: "E2B_DEBUG is set: the SDK would skip kills, so no release could be proven", next: "unset E2B_DEBUG" },
    ];
  if (!env.E2B_API_KEY)
    return [{ name: "e2b-desktop-env", ok: false, detail: "E2B_API_KEY is not set", next: "export E2B_API_KEY (it stays in the humanish process)" }];
  const checks: DesktopDoctorCheck[] = [
    { name: "e2b-desktop-env", ok: true, detail: `E2B_API_KEY is set (value not shown); E2B_DEBUG unset; API ${env.E2B_API_URL ?? "E2B cloud"}` },
  ];
  try {
    const exists = await e2bTemplateExists(template, {
      apiKey: env.E2B_API_KEY,
      connection: { ...(env.E2B_API_URL ? { apiUrl: env.E2B_API_URL } : {}), ...(env.E2B_DOMAIN ? { domain: env.E2B_DOMAIN } : {}) },
    });
    checks.push(
      exists
        ? {
            name: "e2b-desktop-template",
            ok: true,
            detail: `desktop template ${template} exists (looked up, nothing created); it must provide Xvfb, XFCE, xdotool, scrot, python3 and Chromium`,
          }
        : {
            name: "e2b-desktop-template",
            ok: false,
            detail: `desktop template ${template} was not found for this key`,
            next: "use E2B's `desktop` template or set execution.template to one you built from it",
          },
    );
  } catch (e) {
    checks.push({
      name: "e2b-desktop-template",
      ok: false,
      detail: isHumanishError(e) ? `${e.code}: ${e.message}` : String(e),
      ...(isHumanishError(e) && e.next ? { next: e.next } : {}),
    });
  }
  return checks;
}
