/**
 * The report's timeline: the run's lifecycle events and every participant's trace items, ordered
 * by time where known (stable), then one line per hidden check.
 */
import type { ActorTrace, RunBundle, TraceItem } from "../bundle/index.ts";
import type { ReportTimelineEntry } from "./model.ts";

/** A UI action as one line: its type, then each parameter as `key=JSON`. */
function describeAction(action: { type: string } & Record<string, unknown>): string {
  const params = Object.entries(action)
    .filter(([k]) => k !== "type")
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v ?? null)}`);
  return params.length ? `${action.type} ${params.join(" ")}` : action.type;
}

/** One trace item as a timeline entry (null for usage items); `multi` prefixes the participant id. */
function timelineOfItem(item: TraceItem, participant: string, multi: boolean): ReportTimelineEntry | null {
  const who = multi ? `${participant}: ` : "";
  const base = { ...(item.at ? { at: item.at } : {}) };
  switch (item.kind) {
    case "command": {
      const exit = item.command?.exitCode;
      return {
        ...base,
        kind: "command",
        title: `${who}$ ${item.command?.text ?? item.title}`,
        ...(item.command?.outputTail ? { detail: item.command.outputTail } : {}),
        ...(exit !== undefined ? { exitCode: exit } : {}),
        problem: (typeof exit === "number" && exit !== 0) || item.command?.timedOut === true || item.status === "failed",
      };
    }
    case "ui_action":
      return {
        ...base,
        kind: "action",
        title: `${who}${item.action ? describeAction(item.action as { type: string } & Record<string, unknown>) : item.title}`,
        ...(item.text ? { detail: item.text } : {}),
        problem: item.status === "failed" || item.status === "error",
      };
    case "message":
    case "reasoning":
    case "plan":
      return { ...base, kind: item.kind, title: `${who}${item.title}`, ...(item.text ? { detail: item.text } : {}) };
    case "notice":
      return {
        ...base,
        kind: "notice",
        title: `${who}${item.title}`,
        ...(item.text ? { detail: item.text } : {}),
        problem: item.status === "error",
      };
    case "screenshot":
      return { ...base, kind: "screenshot", title: `${who}${item.title}${item.screenshotRef ? ` (${item.screenshotRef.path})` : ""}` };
    case "tool_call":
    case "file_change":
    case "approval":
      return { ...base, kind: item.kind, title: `${who}${item.title}`, ...(item.text ? { detail: item.text } : {}) };
    case "usage":
      return null;
  }
}

/**
 * The timeline of bundle `b`: lifecycle events and trace items (`traces` by participant id)
 * sorted by their ISO `at` (entries without one last, in order), then the hidden checks in task
 * order. `multi` prefixes each title with its participant id.
 */
export function timelineOf(b: RunBundle, traces: ReadonlyMap<string, ActorTrace>, multi: boolean): ReportTimelineEntry[] {
  const entries: { t: number; seq: number; e: ReportTimelineEntry }[] = [];
  let seq = 0;
  const push = (e: ReportTimelineEntry): void => {
    const t = e.at ? Date.parse(e.at) : NaN;
    entries.push({ t: Number.isFinite(t) ? t : Number.POSITIVE_INFINITY, seq: seq++, e });
  };
  for (const l of b.lifecycle) {
    push({
      at: l.at,
      kind: "lifecycle",
      title: l.event,
      ...(l.message ? { detail: l.message } : {}),
      problem: /error|fail|timed_out|exceeded|unconfirmed/.test(l.event),
    });
  }
  for (const p of b.participants) {
    const trace = traces.get(p.id);
    if (!trace) continue;
    for (const item of trace.items) {
      const e = timelineOfItem(item, p.id, multi);
      if (e) push(e);
    }
  }
  entries.sort((a, c) => (a.t === c.t ? a.seq - c.seq : a.t - c.t));
  const timeline = entries.map((x) => x.e);
  for (const t of b.tasks) {
    timeline.push({
      kind: "check",
      title: `${t.participantId && multi ? `${t.participantId}: ` : ""}task ${t.id}: ${t.status}`,
      ...(t.detail ? { detail: t.detail } : {}),
      problem: t.status === "failed",
    });
  }
  return timeline;
}
