/**
 * A controller process for the SIGKILL test: runs a real browser study whose participant waits
 * long enough to be killed mid-study, and prints `DESKTOP <id>` as soon as the guest exists.
 * argv: <cwd> <runId> <appPort> <testRun>
 */
import { parseLab } from "../../src/lab/index.ts";
import { runBrowserStudy } from "../../src/routes/browser/index.ts";
import { TEST_LABEL } from "./guest-support.ts";

const [cwd, runId, appPort, testRun] = process.argv.slice(2) as [string, string, string, string];
const text = `schema: humanish.lab.v2
id: sigkill-probe
subject:
  source: app-url
  appUrl: http://127.0.0.1:${appPort}/
actors:
  - type: scripted-browser
    steps:
      - waitForText: Double-click to edit a todo
      - wait: {ms: 30000}
      - wait: {ms: 30000}
execution:
  target: local
scenario:
  mode: live
`;
const lab = parseLab(text);
if (!lab.ok) throw new Error(lab.error.message);
await runBrowserStudy(
  {
    cwd,
    lab: lab.config,
    labSource: { ref: "sigkill-probe.yaml", sha256: "0".repeat(64) },
    labWarnings: [],
    runId,
    mode: "live",
    env: process.env,
    signal: new AbortController().signal,
    progress: (e) => {
      if (e.phase === "participate") process.stdout.write(`PARTICIPATING\n`);
    },
  },
  { labels: { [TEST_LABEL]: testRun }, onDesktopCreated: (_pid, id) => process.stdout.write(`DESKTOP ${id}\n`) },
);
