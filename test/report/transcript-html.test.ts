/** The report shows stored output (escaped-bytes text) decoded and inert: raw bytes as marked `\xHH`. */
import { describe, expect, test } from "bun:test";
import { encodeOutputBytes } from "../../src/bundle/output-codec.ts";
import { transcriptHtml } from "../../src/report/html.ts";

describe("transcript HTML", () => {
  test("control and invalid bytes show as marked escapes; backslashes and markup are text", () => {
    const stored = encodeOutputBytes(
      Uint8Array.from([...new TextEncoder().encode("bel"), 0x07, 0x20, 0x5c, 0x20, 0x1b, ...new TextEncoder().encode("]0;x<b>"), 0xff, 0x0a]),
    );
    expect(stored).toBe("bel\\x07 \\\\ \\x1b]0;x<b>\\xff\n");
    const html = transcriptHtml(stored);
    expect(html).toBe('bel<span class="byte">\\x07</span> \\ <span class="byte">\\x1b</span>]0;x&lt;b&gt;<span class="byte">\\xff</span>\n');
    expect(html).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});
