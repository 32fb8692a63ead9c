/** The report's Findings section (pure rendering): escaped, linked to the strips' figures, honest about rejected output. */
import { describe, expect, test } from "bun:test";
import { type ReportFindings, renderFindings, screenshotAnchors } from "../../src/report/findings.ts";
import { escapeHtml } from "../../src/report/html.ts";

const HOSTILE = `<script>document.title="PWNED"</script><img src=x onerror=alert(1)>`;
const shots = {
  participants: [{ id: "p1" }, { id: "p2" }],
  screenshots: [
    { path: "screenshots/p2/turn-01.png", participantId: "p2" },
    { path: "screenshots/p1/turn-01.png", participantId: "p1" },
    { path: "screenshots/p1/turn-02.png", participantId: "p1" },
    { path: "screenshots/stray.png" },
  ],
};
const base: ReportFindings = {
  attempt: "0001",
  status: "complete",
  provider: "openai",
  model: "gpt-5.1",
  summary: HOSTILE,
  limitations: [HOSTILE],
  findings: [
    {
      id: "f1",
      title: HOSTILE,
      severity: "blocker",
      kind: "participant_reported",
      participants: ["p1"],
      tasks: ["add-todo"],
      recommendation: HOSTILE,
      evidence: [
        { id: "p1/screenshot/0002", kind: "screenshot", basis: "observed", path: "screenshots/p1/turn-02.png" },
        { id: "p1/transcript#L1-L40", kind: "transcript", basis: "observed", path: "terminal-transcript.txt", preview: HOSTILE },
        { id: "p2/transcript#L1-L40", kind: "transcript", basis: "observed", path: "seats/p2/terminal-transcript.txt" },
      ],
    },
  ],
  rejectedFindings: 1,
  omitted: 3,
  costUsd: 0.0123,
  costLabel: "priced",
  error: null,
};

describe("renderFindings", () => {
  test("numbers anchors the way the strips do: seat by seat, then unclaimed frames", () => {
    expect([...screenshotAnchors(shots)]).toEqual([
      ["screenshots/p1/turn-01.png", "shot-1"],
      ["screenshots/p1/turn-02.png", "shot-2"],
      ["screenshots/p2/turn-01.png", "shot-3"],
      ["screenshots/stray.png", "shot-4"],
    ]);
  });

  test("escapes every model string and links screenshots and the shown transcript", () => {
    const html = renderFindings(base, shots, "terminal-transcript.txt", escapeHtml);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain('<a href="#shot-2"><code>p1/screenshot/0002</code>');
    expect(html).toContain('<a href="#transcript"><code>p1/transcript#L1-L40</code>');
    // Another seat's transcript is not on the page: its id is shown, not linked.
    expect(html).toContain("<li><code>p2/transcript#L1-L40</code>");
    expect(html).toContain("participant reported");
    expect(html).toContain("1 finding(s) rejected");
    expect(html).toContain("3 evidence item(s) not sent");
  });

  test("a rejected analysis says so instead of showing findings", () => {
    const html = renderFindings({ ...base, status: "rejected", findings: [], error: "refusal: the model refused" }, shots, null, escapeHtml);
    expect(html).toContain("No findings: refusal: the model refused");
    expect(html).not.toContain('class="finding"');
  });
});
