/**
 * The `/web` page: a small self-contained terminal UI (no external assets) that opens its own
 * WebSocket session on `/ws`, starts an episode, runs commands through the `terminal` tool and
 * shows the output and the episode's reward.
 */

/** The page, served as `text/html` with a CSP that allows only same-origin connections. */
export const WEB_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>humanish env — terminal</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; max-width: 60rem; color: #1b1b1b; }
  h1 { font-size: 1.2rem; }
  form { display: flex; gap: .5rem; margin: .5rem 0; }
  input[type=text] { flex: 1; font: 14px ui-monospace, monospace; padding: .35rem; }
  pre { background: #111; color: #e6e6e6; padding: .75rem; min-height: 12rem; max-height: 32rem; overflow: auto; white-space: pre-wrap; }
  .status { color: #555; }
  .reward { font-weight: bold; }
</style>
</head>
<body>
<h1>humanish environment — terminal</h1>
<p class="status">Status: <span id="status">connecting…</span> · Episode: <span id="episode">—</span> · Reward: <span id="reward" class="reward">—</span></p>
<button id="reset" type="button">New episode</button>
<form id="run-form">
  <input id="command" type="text" autocomplete="off" placeholder="shell command, e.g. ls -la" aria-label="command">
  <button id="run" type="submit">Run</button>
</form>
<form id="final-form">
  <input id="final" type="text" autocomplete="off" placeholder="final answer (runs the checks and ends the episode)" aria-label="final answer">
  <button id="submit-final" type="submit">Submit final answer</button>
</form>
<pre id="output" aria-live="polite"></pre>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const out = $("output");
  const append = (text) => { out.textContent += text; out.scrollTop = out.scrollHeight; };
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(proto + "//" + location.host + "/ws");
  let ready = false;
  const setStatus = (s) => { $("status").textContent = s; };
  const send = (msg) => ws.send(JSON.stringify(msg));
  ws.onopen = () => { setStatus("connected"); send({ type: "reset", data: {} }); };
  ws.onclose = () => { ready = false; setStatus("disconnected"); };
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === "error") { append("[error " + msg.data.code + "] " + msg.data.message + "\\n"); setStatus("error"); return; }
    if (msg.type !== "observation") return;
    const res = msg.data;
    const obs = res.observation || {};
    if (obs.tool_name === undefined) {
      const meta = res.metadata || {};
      $("episode").textContent = meta.episode_id || "—";
      $("reward").textContent = "—";
      if (meta.error) append("[reset failed] " + meta.error.message + "\\n");
      ready = !res.done;
      setStatus(ready ? "ready" : "episode over");
      return;
    }
    const r = obs.result;
    if (obs.error) append("[" + obs.error.error_type + "] " + obs.error.message + "\\n");
    if (r && typeof r.exit_code === "number") {
      if (r.stdout) append(r.stdout);
      if (r.stderr) append(r.stderr);
      append("[exit " + r.exit_code + "]\\n");
    }
    if (res.done) {
      ready = false;
      $("reward").textContent = res.reward === null ? "none (infrastructure failure)" : String(res.reward);
      if (r && r.total !== undefined) append("[episode over] passed " + r.passed + "/" + r.total + ", reward " + r.reward + "\\n");
      setStatus("episode over");
    } else {
      setStatus("ready");
    }
  };
  $("reset").onclick = () => { out.textContent = ""; setStatus("resetting…"); send({ type: "reset", data: {} }); };
  $("run-form").onsubmit = (e) => {
    e.preventDefault();
    const command = $("command").value;
    if (!command || !ready) return;
    append("$ " + command + "\\n");
    $("command").value = "";
    setStatus("running…");
    send({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { command } } });
  };
  $("final-form").onsubmit = (e) => {
    e.preventDefault();
    const final_answer = $("final").value;
    if (!final_answer || !ready) return;
    append("final answer: " + final_answer + "\\n");
    setStatus("checking…");
    send({ type: "step", data: { type: "call_tool", tool_name: "terminal", arguments: { final_answer } } });
  };
})();
</script>
</body>
</html>
`;
