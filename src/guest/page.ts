/**
 * The guest's view of Chromium's single page over CDP:
 * - tracks a generation counter bumped on every navigation, frame attach/detach, dialog, and
 *   page target creation/destruction, plus the set of open page targets and whether a dialog
 *   was ever seen (a dialog poisons content text for the rest of the session);
 * - the content-text port: a fixed focus probe evaluated in a fresh isolated world of the
 *   top-level frame, then `Input.insertText` — participant text never becomes JavaScript;
 * - the owner-side page facts an observation carries (`url`, `title`, visible `text`, `scrollY`).
 */
import { randomUUID } from "node:crypto";
import { HumanishError } from "../errors.ts";
import { pollUntil } from "../poll.ts";
import type { CdpEvent, CdpPipe } from "./cdp.ts";

/** Result of the focus probe: `ok` or the reason content text is refused. */
export type FocusVerdict = "ok" | "no_focus" | "no_element" | "iframe" | "not_editable" | "unreadable";

// A fixed expression: checks that the top-level document has focus and its active element is an
// enabled, writable text control or a contentEditable element of this same document.
const FOCUS_PROBE = `(() => {
  const d = document;
  if (!d.hasFocus()) return "no_focus";
  const el = d.activeElement;
  if (!el || !el.isConnected || el.ownerDocument !== d || el === d.body || el === d.documentElement) return "no_element";
  const tag = el.tagName;
  if (tag === "IFRAME" || tag === "FRAME" || tag === "OBJECT" || tag === "EMBED") return "iframe";
  if (tag === "TEXTAREA") return el.disabled || el.readOnly ? "not_editable" : "ok";
  if (tag === "INPUT") {
    const t = String(el.type || "text").toLowerCase();
    if (!["text", "search", "tel", "url", "email", "password", "number"].includes(t)) return "not_editable";
    return el.disabled || el.readOnly ? "not_editable" : "ok";
  }
  return el.isContentEditable ? "ok" : "not_editable";
})()`;

const PAGE_FACTS = `JSON.stringify({
  url: String(location.href),
  title: String(document.title),
  text: document.body ? String(document.body.innerText) : "",
  scrollY: Number(window.scrollY) || 0
})`;

/** Page facts for an observation (strings ≤ 64 KiB UTF-8 each, cut at a code point). */
export interface PageFacts {
  url: string;
  title: string;
  text: string;
  scrollY: number;
}

function cutUtf8(s: string, maxBytes: number): string {
  const enc = new TextEncoder();
  if (enc.encode(s).length <= maxBytes) return s;
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (enc.encode(s.slice(0, mid)).length <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  let out = s.slice(0, lo);
  if (/[\uD800-\uDBFF]$/.test(out)) out = out.slice(0, -1);
  return out;
}

/** The page tracker + text port over one flattened CDP session. */
export class GuestPage {
  /** Bumped on any page change (navigation, frames, dialogs, tabs). */
  generation = 0;
  /** True once a JavaScript dialog opened; content text is refused from then on. */
  dialogSeen = false;
  /** Open page targets by id. */
  readonly pages = new Set<string>();
  /** Navigations the top-level frame committed so far (a new document or a same-document one). */
  topCommits = 0;
  private topFrameId: string | undefined;

  private constructor(
    private readonly cdp: CdpPipe,
    /** The owner's page target id. */
    readonly targetId: string,
    /** The flattened CDP session id of that target. */
    readonly sessionId: string,
  ) {}

  /**
   * Attach to the browser's one page target and start tracking.
   * @throws HumanishError `HUMANISH_GUEST_BROWSER_FAILED` when there is not exactly one page.
   */
  static async attach(cdp: CdpPipe): Promise<GuestPage> {
    const deadline = Date.now() + 15_000;
    let pageIds: string[] = [];
    while (Date.now() < deadline) {
      const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: { targetId: string; type: string }[] };
      pageIds = targetInfos.filter((t) => t.type === "page").map((t) => t.targetId);
      if (pageIds.length > 0) break;
      await Bun.sleep(100);
    }
    if (pageIds.length !== 1) {
      throw new HumanishError("HUMANISH_GUEST_BROWSER_FAILED", `Chromium opened ${pageIds.length} pages, expected exactly 1`, { next: "see the guest log" });
    }
    const targetId = pageIds[0]!;
    const { sessionId } = (await cdp.send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId: string };
    const page = new GuestPage(cdp, targetId, sessionId);
    for (const id of pageIds) page.pages.add(id);
    cdp.on((e) => page.onEvent(e));
    await cdp.send("Target.setDiscoverTargets", { discover: true });
    await cdp.send("Page.enable", {}, sessionId);
    const tree = (await cdp.send("Page.getFrameTree", {}, sessionId)) as { frameTree: { frame: { id: string } } };
    page.topFrameId = tree.frameTree.frame.id;
    return page;
  }

  private onEvent(e: CdpEvent): void {
    if (e.method === "Target.targetCreated" || e.method === "Target.targetInfoChanged") {
      const info = e.params.targetInfo as { targetId: string; type: string };
      if (info.type === "page" && !this.pages.has(info.targetId)) {
        this.pages.add(info.targetId);
        this.generation++;
      }
    } else if (e.method === "Target.targetDestroyed") {
      const id = e.params.targetId as string;
      if (this.pages.delete(id)) this.generation++;
    } else if (e.sessionId === this.sessionId) {
      if (e.method === "Page.javascriptDialogOpening") {
        this.dialogSeen = true;
        this.generation++;
      } else if (
        e.method === "Page.frameNavigated" ||
        e.method === "Page.frameAttached" ||
        e.method === "Page.frameDetached" ||
        e.method === "Page.navigatedWithinDocument"
      ) {
        this.generation++;
        const frame = e.params.frame as { id: string; parentId?: string } | undefined;
        if (e.method === "Page.frameNavigated" && frame && !frame.parentId) {
          this.topFrameId = frame.id;
          this.topCommits++;
        } else if (e.method === "Page.navigatedWithinDocument" && e.params.frameId === this.topFrameId) {
          this.topCommits++;
        }
      }
    } else if (e.method === "humanish.pipeClosed") {
      this.generation++;
    }
  }

  /** True while only the owner's page is open and no dialog was seen. */
  get sole(): boolean {
    return this.pages.size === 1 && this.pages.has(this.targetId);
  }

  /**
   * Wait until the top-level document is `url` and fully loaded (`document.readyState ===
   * "complete"`), polling every 100 ms up to `timeoutMs`. Chromium is launched with the initial
   * URL, so the page — not the address bar — holds focus, as after a person opens a link.
   * @throws HumanishError `HUMANISH_GUEST_NAVIGATION_FAILED` on timeout.
   */
  async waitForLoad(url: string, timeoutMs = 30_000): Promise<void> {
    const loaded = await pollUntil(
      async () => {
        try {
          const v = await this.isolatedEval(`JSON.stringify([String(location.href), document.readyState])`, 5_000);
          const [href, state] = JSON.parse(String(v)) as [string, string];
          return href === url && state === "complete";
        } catch {
          return false; // the frame is still being created or replaced
        }
      },
      { timeoutMs, intervalMs: 100 },
    );
    if (!loaded) {
      throw new HumanishError("HUMANISH_GUEST_NAVIGATION_FAILED", `the initial page did not finish loading within ${timeoutMs} ms`, {
        next: "check that the app answers on its loopback port",
      });
    }
  }

  /**
   * After input that may start a top-level navigation (Enter after address-bar text): wait until
   * the top frame committed a navigation after `since` ({@link topCommits} read before the
   * input), its document finished loading and holds the keyboard focus — polling every 50 ms for
   * at most `timeoutMs`. Until then the address bar may keep the focus (an Enter goes to it) and
   * text may land in the document being replaced. Never throws.
   * @returns whether the new page settled in time.
   */
  async settleNavigation(since: number, timeoutMs: number): Promise<boolean> {
    return pollUntil(
      async (remainingMs) => {
        if (this.topCommits <= since) return false;
        try {
          const v = await this.isolatedEval(`JSON.stringify([document.readyState, document.hasFocus()])`, remainingMs);
          const [state, focused] = JSON.parse(String(v)) as [string, boolean];
          return state === "complete" && focused;
        } catch {
          return false; // the committed frame is still being replaced: ask again
        }
      },
      { timeoutMs, intervalMs: 50 },
    );
  }

  /**
   * After Ctrl+L: wait until the address bar holds the keyboard focus, i.e. the page's document
   * no longer has it (`document.hasFocus()` false), polling every 20 ms for at most `timeoutMs`.
   * Chromium offers Ctrl+L to the page first and moves the focus only once the renderer answers
   * that it did not handle it, so keys sent before then still reach the page. Never throws.
   * @returns whether the address bar took the focus in time.
   */
  async waitForAddressBarFocus(timeoutMs: number): Promise<boolean> {
    return pollUntil(
      async (remainingMs) => {
        try {
          return (await this.isolatedEval("document.hasFocus()", remainingMs)) === false;
        } catch {
          return false; // no document to ask right now (mid-navigation): ask again
        }
      },
      { timeoutMs, intervalMs: 20 },
    );
  }

  private async isolatedEval(expression: string, timeoutMs: number): Promise<unknown> {
    const frameId = this.topFrameId;
    if (!frameId) throw new HumanishError("HUMANISH_GUEST_BROWSER_FAILED", "no top-level frame", { next: "restart the desktop" });
    const { executionContextId } = (await this.cdp.send(
      "Page.createIsolatedWorld",
      { frameId, worldName: `humanish-text-${randomUUID()}`, grantUniveralAccess: false },
      this.sessionId,
      timeoutMs,
    )) as { executionContextId: number };
    const res = (await this.cdp.send(
      "Runtime.evaluate",
      { expression, contextId: executionContextId, returnByValue: true, awaitPromise: false, userGesture: false, includeCommandLineAPI: false, silent: true },
      this.sessionId,
      timeoutMs,
    )) as { result?: { value?: unknown }; exceptionDetails?: unknown };
    if (res.exceptionDetails) throw new HumanishError("HUMANISH_GUEST_BROWSER_FAILED", "probe raised", { next: "restart the desktop" });
    return res.result?.value;
  }

  /** Run the fixed focus probe in a fresh isolated world of the top-level frame (5 s). */
  async focusVerdict(): Promise<FocusVerdict> {
    const v = await this.isolatedEval(FOCUS_PROBE, 5_000);
    return typeof v === "string" && ["ok", "no_focus", "no_element", "iframe", "not_editable"].includes(v) ? (v as FocusVerdict) : "unreadable";
  }

  /** `Input.insertText {text}` into the focused element (5 s). */
  async insertText(text: string): Promise<void> {
    await this.cdp.send("Input.insertText", { text }, this.sessionId, 5_000);
  }

  /** URL, title, visible text (≤ 64 KiB each) and scrollY of the top-level document. */
  async facts(): Promise<PageFacts> {
    const raw = await this.isolatedEval(PAGE_FACTS, 5_000);
    const p = JSON.parse(String(raw)) as PageFacts;
    return { url: cutUtf8(p.url, 65_536), title: cutUtf8(p.title, 65_536), text: cutUtf8(p.text, 65_536), scrollY: Number.isFinite(p.scrollY) ? p.scrollY : 0 };
  }
}
