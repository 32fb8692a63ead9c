/**
 * Chromium on the E2B desktop, and the page facts the hidden checks read.
 *
 * The lane uploads two small Python (stdlib only) programs into a private directory of the
 * sandbox:
 * - `launcher.py` starts Chromium with its sandbox on (no flag that turns it off: a Linux Chromium that
 *   cannot sandbox itself refuses to start, so a running browser is a sandboxed one) and with the
 *   DevTools protocol on a pipe (`--remote-debugging-pipe`: no TCP port exists for anything in or
 *   outside the sandbox to reach), and answers page-fact requests on a Unix socket in that
 *   private directory.
 * - `facts.py` asks the launcher once and prints one JSON line: the page facts, or with `probe`
 *   the page's document identity (`performance.timeOrigin`, new for every document), load state
 *   and whether it holds the keyboard focus — what input after the address bar waits on.
 * Facts are read in an isolated world (the page's own scripts cannot change what the check sees)
 * with a fixed expression: the top page's URL, title, `innerText` (≤ 64 KiB) and scroll offset.
 * With more than one page open, only `{"pages": n}` comes back (the frame alone is the
 * observation, as on the local guest).
 *
 * This module holds the program texts and the pure parse of their output; no I/O.
 */
import { z } from "zod";

/** Largest page text kept, characters (the observation bound). */
export const MAX_FACT_TEXT = 65_536;

/** The launcher: `python3 -I launcher.py <socket> <chromium> <profile dir> <width> <height> <url>`. */
export const LAUNCHER_PY = String.raw`import fcntl, json, os, socket, subprocess, sys, threading, uuid

sock_path, chromium, profile, width, height, url = sys.argv[1:7]
to_browser_r, to_browser_w = os.pipe()
from_browser_r, from_browser_w = os.pipe()
# The browser's two ends, moved above the low descriptors; the child places them at 3 and 4.
# os.pipe descriptors are close-on-exec and dup2 results are not, so with close_fds=False the
# browser inherits exactly stdio and these two.
child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)

def place_pipe():
    os.dup2(child_in, 3)
    os.dup2(child_out, 4)

args = [chromium, "--user-data-dir=" + profile, "--no-first-run", "--no-default-browser-check",
        "--disable-features=Translate", "--password-store=basic", "--disable-session-crashed-bubble",
        "--window-position=0,0", "--window-size=" + width + "," + height, "--remote-debugging-pipe", url]
proc = subprocess.Popen(args, close_fds=False, preexec_fn=place_pipe, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for fd in (to_browser_r, from_browser_w, child_in, child_out):
    os.close(fd)

lock = threading.Lock()
waiting = {}
next_id = [0]

def reader():
    buf = b""
    while True:
        chunk = os.read(from_browser_r, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\0" in buf:
            raw, buf = buf.split(b"\0", 1)
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            slot = waiting.pop(msg.get("id"), None) if isinstance(msg, dict) else None
            if slot is not None:
                slot[1] = msg
                slot[0].set()
    os._exit(3)

threading.Thread(target=reader, daemon=True).start()

def call(method, params=None, session=None, timeout=5.0):
    with lock:
        next_id[0] += 1
        mid = next_id[0]
        slot = [threading.Event(), None]
        waiting[mid] = slot
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(to_browser_w, json.dumps(msg).encode() + b"\0")
    if not slot[0].wait(timeout):
        waiting.pop(mid, None)
        raise RuntimeError("timeout")
    if "error" in slot[1]:
        raise RuntimeError("cdp error")
    return slot[1].get("result", {})

EXPR = ("JSON.stringify({url: String(location.href), title: String(document.title), "
        "text: document.body ? String(document.body.innerText).slice(0, 65536) : '', "
        "scrollY: Math.round(window.scrollY)})")

PROBE = ("JSON.stringify({timeOrigin: performance.timeOrigin, readyState: String(document.readyState), "
         "focused: document.hasFocus()})")

def facts(expr=EXPR):
    pages = [t for t in call("Target.getTargets")["targetInfos"] if t.get("type") == "page"]
    if len(pages) != 1:
        return {"pages": len(pages)}
    session = call("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})["sessionId"]
    try:
        frame = call("Page.getFrameTree", session=session)["frameTree"]["frame"]["id"]
        world = call("Page.createIsolatedWorld", {"frameId": frame, "worldName": "humanish-facts-" + uuid.uuid4().hex}, session=session)
        res = call("Runtime.evaluate", {"expression": expr, "contextId": world["executionContextId"], "returnByValue": True,
                                         "awaitPromise": False, "userGesture": False, "includeCommandLineAPI": False,
                                         "silent": True}, session=session)
        value = res.get("result", {}).get("value")
        out = json.loads(value) if isinstance(value, str) else {}
        out["pages"] = 1
        return out
    finally:
        try:
            call("Target.detachFromTarget", {"sessionId": session})
        except RuntimeError:
            pass

os.umask(0o077)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
server.listen(4)
while proc.poll() is None:
    server.settimeout(1.0)
    try:
        conn, _ = server.accept()
    except socket.timeout:
        continue
    with conn:
        try:
            conn.settimeout(5.0)
            request = b""
            while not request.endswith(b"\n") and len(request) < 64:
                chunk = conn.recv(64)
                if not chunk:
                    break
                request += chunk
            reply = {"ok": True, "facts": facts(PROBE if request.strip() == b"probe" else EXPR)}
        except Exception:
            reply = {"ok": False}
        conn.sendall(json.dumps(reply).encode() + b"\n")
sys.exit(4)
`;

/**
 * The facts client: `python3 -I facts.py <socket> [probe]`; asks for the page facts (or, with
 * `probe`, the page's document identity, load state and focus) and prints the launcher's one
 * JSON line.
 */
export const FACTS_PY = String.raw`import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10.0)
s.connect(sys.argv[1])
s.sendall((sys.argv[2] if len(sys.argv) > 2 else "facts").encode() + b"\n")
data = b""
while not data.endswith(b"\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode("utf-8", "replace"))
`;

const factsSchema = z.object({
  pages: z.number().int().min(0),
  url: z.string().max(MAX_FACT_TEXT).optional(),
  title: z.string().max(MAX_FACT_TEXT).optional(),
  text: z.string().max(MAX_FACT_TEXT).optional(),
  scrollY: z.number().finite().optional(),
});
const replySchema = z.object({ ok: z.boolean(), facts: factsSchema.optional() });

/** Page facts of the sole page (absent when another tab is open or the read failed). */
export interface PageFacts {
  url: string;
  title: string;
  text: string;
  scrollY: number;
}

/**
 * Parse `facts.py` output. Returns the sole page's facts, `"other-tabs"` when more than one page
 * is open, or `undefined` when the read failed (mid-navigation, a dialog, a malformed line).
 */
export function parseFacts(stdout: string): PageFacts | "other-tabs" | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout.trim());
  } catch {
    return undefined;
  }
  const r = replySchema.safeParse(raw);
  if (!r.success || !r.data.ok || !r.data.facts) return undefined;
  const f = r.data.facts;
  if (f.pages !== 1) return "other-tabs";
  if (f.url === undefined || f.title === undefined || f.text === undefined) return undefined;
  return { url: f.url, title: f.title, text: f.text, scrollY: Math.max(0, Math.round(f.scrollY ?? 0)) };
}

const probeSchema = z.object({
  pages: z.literal(1),
  timeOrigin: z.number().finite(),
  readyState: z.string().max(32),
  focused: z.boolean(),
});

/** The sole page's document identity, load state and keyboard focus. */
export interface PageProbe {
  /** `performance.timeOrigin` of the document, ms since the epoch: a new document has a new one. */
  timeOrigin: number;
  readyState: string;
  focused: boolean;
}

/** Parse `facts.py … probe` output; `undefined` when the read failed or another tab is open. */
export function parseProbe(stdout: string): PageProbe | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout.trim());
  } catch {
    return undefined;
  }
  const r = replySchema.extend({ facts: probeSchema.optional() }).safeParse(raw);
  if (!r.success || !r.data.ok || !r.data.facts) return undefined;
  const { timeOrigin, readyState, focused } = r.data.facts;
  return { timeOrigin, readyState, focused };
}
