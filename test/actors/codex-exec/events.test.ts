/**
 * The `codex exec --json` stream fold (cases/README.md: turn.completed = success and its usage
 * sums the turn; turn.failed is final; an `error` event alone is not final).
 */
import { describe, expect, test } from "bun:test";
import {
  CodexEventStream,
  codexTokenUsage,
  findVerdictMarker,
  MAX_EVENT_LINE_BYTES,
  MAX_ITEM_TEXT_CHARS,
  MAX_TRACE_ITEMS,
} from "../../../src/actors/codex-exec/events.ts";

const id = (s: string) => s;
const enc = new TextEncoder();

const SUCCESS = [
  { type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
  { type: "turn.started" },
  { type: "item.started", item: { id: "item_0", type: "command_execution", command: "bash -lc 'jq --help'", aggregated_output: "", status: "in_progress" } },
  {
    type: "item.completed",
    item: {
      id: "item_0",
      type: "command_execution",
      command: "bash -lc 'jq --help'",
      aggregated_output: "Usage: jq [OPTIONS] FILTER\n",
      exit_code: 0,
      status: "completed",
    },
  },
  { type: "error", message: "stream disconnected - retrying turn (1/5)" },
  { type: "item.completed", item: { id: "item_1", type: "reasoning", text: "**Reading the help**" } },
  { type: "item.completed", item: { id: "item_2", type: "file_change", changes: [{ path: "pretty.json", kind: "add" }], status: "completed" } },
  { type: "item.completed", item: { id: "item_3", type: "agent_message", text: "Done.\nHUMANISH_ACTOR_VERDICT=passed HUMANISH_ACTOR_NONCE=abc123def456" } },
  { type: "turn.completed", usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122, reasoning_output_tokens: 64 } },
];

function jsonl(events: unknown[]): Uint8Array {
  return enc.encode(`${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
}

describe("CodexEventStream", () => {
  test("a completed turn: items, commands, messages, usage per turn", () => {
    const s = new CodexEventStream(id);
    s.push(jsonl(SUCCESS));
    const st = s.end();
    expect(st.end).toBe("turn_completed");
    expect(st.threadId).toBe("0199a213-81c0-7800-8aa1-bbab2a035a53");
    expect(st.commands).toBe(1);
    expect(st.agentMessages).toHaveLength(1);
    expect(st.errors).toEqual(["stream disconnected - retrying turn (1/5)"]);
    const items = [...st.items.values()];
    expect(items.map((i) => i.kind)).toEqual(["command", "reasoning", "file_change", "message"]);
    expect(items[0]!.lifecycle).toBe("completed");
    expect(items[0]!.command).toEqual({ text: "bash -lc 'jq --help'", exitCode: 0, outputTail: "Usage: jq [OPTIONS] FILTER\n" });
    expect(items[2]!.title).toBe("file change: add pretty.json");
    expect(st.turns).toEqual([{ input: 24763, cachedInput: 24448, output: 122, reasoningOutput: 64 }]);
    expect(codexTokenUsage(st)).toEqual({ input: 24763, output: 122, cachedInput: 24448, total: 24885, turns: st.turns });
  });

  test("the same stream split at every byte offset folds to the same state", () => {
    const bytes = jsonl(SUCCESS);
    const whole = new CodexEventStream(id);
    whole.push(bytes);
    const want = whole.end();
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new CodexEventStream(id);
      s.push(bytes.subarray(0, cut));
      s.push(bytes.subarray(cut));
      const got = s.end();
      expect(got.turns).toEqual(want.turns);
      expect(got.agentMessages).toEqual(want.agentMessages);
      expect(got.commands).toBe(want.commands);
      expect(got.end).toBe("turn_completed");
      expect(got.malformedLines).toBe(0);
    }
  });

  test("a 1-byte drip with a multi-byte character split across chunks", () => {
    const bytes = jsonl([
      { type: "item.completed", item: { id: "m", type: "agent_message", text: "café ✓" } },
      { type: "turn.completed", usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 2 } },
    ]);
    const s = new CodexEventStream(id);
    for (const b of bytes) s.push(new Uint8Array([b]));
    const st = s.end();
    expect(st.agentMessages).toEqual(["café ✓"]);
    expect(st.end).toBe("turn_completed");
  });

  test("an error event alone is not final; no turn.completed means no success", () => {
    const s = new CodexEventStream(id);
    s.push(jsonl([{ type: "thread.started", thread_id: "t" }, { type: "turn.started" }, { type: "error", message: "unexpected status 401 Unauthorized" }]));
    const st = s.end();
    expect(st.end).toBe("no_final_event");
    expect(st.errors).toEqual(["unexpected status 401 Unauthorized"]);
    expect(codexTokenUsage(st)).toBeUndefined();
  });

  test("turn.failed is final and carries its message", () => {
    const s = new CodexEventStream(id);
    s.push(
      jsonl([
        { type: "turn.started" },
        { type: "error", message: "retrying" },
        { type: "turn.failed", error: { message: "exceeded retry limit, last status: 429" } },
      ]),
    );
    const st = s.end();
    expect(st.end).toBe("turn_failed");
    expect(st.turnFailedMessage).toBe("exceeded retry limit, last status: 429");
  });

  test("usage sums over several turns", () => {
    const s = new CodexEventStream(id);
    s.push(
      jsonl([
        { type: "turn.started" },
        { type: "turn.completed", usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 10 } },
        { type: "turn.started" },
        { type: "turn.completed", usage: { input_tokens: 200, cached_input_tokens: 0, output_tokens: 20 } },
      ]),
    );
    expect(codexTokenUsage(s.end())).toEqual({
      input: 300,
      output: 30,
      cachedInput: 50,
      total: 330,
      turns: [
        { input: 100, cachedInput: 50, output: 10 },
        { input: 200, cachedInput: 0, output: 20 },
      ],
    });
  });

  test("junk lines, unknown events and unknown items never crash", () => {
    const s = new CodexEventStream(id);
    s.push(
      enc.encode(
        'not json\n[1,2]\n{"no":"type"}\n{"type":"thread.mystery"}\n{"type":"item.completed","item":{"id":"x","type":"hologram"}}\n{"type":"item.completed"}\n',
      ),
    );
    const st = s.end();
    expect(st.malformedLines).toBe(5);
    expect([...st.items.values()].map((i) => [i.kind, i.title])).toEqual([["notice", "unrecognised item type hologram"]]);
  });

  test("an oversized line is dropped and counted, later lines still parse", () => {
    const s = new CodexEventStream(id);
    const big = new Uint8Array(MAX_EVENT_LINE_BYTES + 10).fill(0x61);
    s.push(big);
    s.push(enc.encode('\n{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n'));
    const st = s.end();
    expect(st.oversizedLines).toBe(1);
    expect(st.end).toBe("turn_completed");
  });

  test("a last line without a newline is parsed at end()", () => {
    const s = new CodexEventStream(id);
    s.push(enc.encode('{"type":"turn.completed","usage":{"input_tokens":3,"cached_input_tokens":1,"output_tokens":4}}'));
    expect(s.end().end).toBe("turn_completed");
  });

  test("every text goes through the redactor", () => {
    const s = new CodexEventStream((t) => t.replaceAll("SECRET-VALUE", "[R]"));
    s.push(
      jsonl([
        {
          type: "item.completed",
          item: { id: "c", type: "command_execution", command: "echo SECRET-VALUE", aggregated_output: "SECRET-VALUE\n", exit_code: 0, status: "completed" },
        },
        { type: "error", message: "bad key SECRET-VALUE" },
      ]),
    );
    const st = s.end();
    expect(JSON.stringify([...st.items.values()])).not.toContain("SECRET-VALUE");
    expect(st.errors).toEqual(["bad key [R]"]);
  });

  test("item text is kept as a bounded tail; items beyond the trace limit are counted, not kept", () => {
    const s = new CodexEventStream(id);
    s.push(jsonl([{ type: "item.completed", item: { id: "long", type: "agent_message", text: `${"a".repeat(20_000)}END` } }]));
    const events = Array.from({ length: MAX_TRACE_ITEMS + 5 }, (_, i) => ({
      type: "item.completed",
      item: { id: `c${i}`, type: "command_execution", command: "true", aggregated_output: "", exit_code: 0, status: "completed" },
    }));
    s.push(jsonl(events));
    const st = s.end();
    const long = st.items.get("long")!;
    expect(long.text!.length).toBe(MAX_ITEM_TEXT_CHARS);
    expect(long.text!.endsWith("END")).toBe(true);
    expect(st.items.size).toBe(MAX_TRACE_ITEMS);
    expect(st.droppedItems).toBe(6);
    expect(st.commands).toBe(MAX_TRACE_ITEMS + 5);
  });

  test("progress descriptions are reported as events arrive", () => {
    const seen: string[] = [];
    const s = new CodexEventStream(id, (d) => seen.push(d));
    s.push(jsonl(SUCCESS.slice(0, 4)));
    expect(seen).toEqual(["thread started", "turn 1 started", "command: bash -lc 'jq --help'", "command: bash -lc 'jq --help'"]);
  });
});

describe("findVerdictMarker", () => {
  test("only a marker with this run's nonce counts; the last one wins", () => {
    expect(findVerdictMarker(["HUMANISH_ACTOR_VERDICT=passed HUMANISH_ACTOR_NONCE=other0000000"], "abc123def456")).toBeUndefined();
    expect(
      findVerdictMarker(
        ["HUMANISH_ACTOR_VERDICT=blocked HUMANISH_ACTOR_NONCE=abc123def456", "…\nHUMANISH_ACTOR_VERDICT=failed HUMANISH_ACTOR_NONCE=abc123def456"],
        "abc123def456",
      ),
    ).toEqual({ verdict: "failed" });
    expect(findVerdictMarker(["HUMANISH_ACTOR_VERDICT=<passed|blocked|failed> HUMANISH_ACTOR_NONCE=abc123def456"], "abc123def456")).toBeUndefined();
    expect(findVerdictMarker([], "abc123def456")).toBeUndefined();
  });
});
