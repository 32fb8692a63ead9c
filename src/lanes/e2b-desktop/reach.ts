/**
 * Where the app under study is for an E2B desktop. The desktop runs on E2B's machines, so a
 * loopback URL of this machine means nothing there. Two placements work:
 * - `public`: an `https://` URL on a public host (no loopback name, no private or link-local
 *   address), opened as written;
 * - `served`: `subject.serve.static` — the lab uploads the app's files into the desktop and serves
 *   them there on the loopback URL the lab declares (`http://127.0.0.1:<port>/…`), so the URL is a
 *   loopback of the desktop itself.
 * Everything else is refused before anything is created. Pure.
 */
import { HumanishError } from "../../errors.ts";
import { publicHttpsUrlProblem } from "../../lab/schema-common.ts";

/** Where the desktop's Chromium finds the app. */
export type AppPlacement = { kind: "public"; url: URL } | { kind: "served"; url: URL; root: string };

const NEXT =
  "use a public https:// URL, or add subject.serve.static (an embedded app such as embedded:todomvc-vanillajs, or a project directory) so the lab serves the app inside the desktop";

function unreachable(message: string, next = NEXT): HumanishError {
  return new HumanishError("HUMANISH_E2B_DESKTOP_APP_UNREACHABLE", message, { next });
}

/**
 * Decide the placement of `appUrl` given the lab's `subject.serve`.
 * @throws HumanishError `HUMANISH_E2B_DESKTOP_APP_UNREACHABLE` for a loopback URL without
 *   `serve.static`, a `serve.command` (a process on this machine), plain `http` to a public host,
 *   or an `https` URL naming a private host.
 */
export function placeApp(appUrl: string, serve: { static?: { root: string }; command?: string } | undefined): AppPlacement {
  let url: URL;
  try {
    url = new URL(appUrl);
  } catch {
    throw unreachable(`subject.appUrl ${JSON.stringify(appUrl.slice(0, 200))} is not a URL`);
  }
  if (serve?.command !== undefined) {
    throw unreachable(
      "subject.serve.command starts a process on this machine, which an E2B desktop cannot reach",
      "remove serve.command and use a public https:// URL, or serve.static so the lab serves the files inside the desktop",
    );
  }
  const loopback = url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost");
  if (loopback) {
    if (serve?.static) return { kind: "served", url, root: serve.static.root };
    throw unreachable(`subject.appUrl ${url.origin} is a loopback address of this machine: an E2B desktop runs on E2B's machines and cannot reach it`);
  }
  if (serve?.static)
    throw unreachable("subject.serve.static serves the app inside the desktop on the lab's loopback appUrl; set appUrl to http://127.0.0.1:<port>/");
  const why = publicHttpsUrlProblem(appUrl);
  if (why) throw unreachable(`subject.appUrl ${why}`);
  return { kind: "public", url };
}
