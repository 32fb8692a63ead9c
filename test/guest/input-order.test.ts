/**
 * Input arrives in order on a starved host: in a real guest (real Xvfb, xdotool and Chromium),
 * type a todo and press Enter, many times in a row with no pause, while two busy loops hold the
 * host's cores — then every todo must be on the list, whole and in the order it was typed. With
 * text on CDP and keys on xdotool and nothing ordering the two, an Enter that Chromium had not
 * yet read was overtaken by the next text ("item-03item-04" as one todo, "item-03" missing).
 *
 * `HUMANISH_LOCAL_RUNTIME_IMAGE` (the runtime's own override) runs the same test against another
 * guest image, e.g. one built from an older binary, to see it fail.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import type { DockerClient } from "../../src/docker/index.ts";
import type { AppServer } from "../../src/routes/browser/serve.ts";
import { allocateDesktop, type LocalDesktop } from "../../src/runtime/desktop.ts";
import { ensureGuestImage, type GuestImage } from "../../src/runtime/guest-image.ts";
import { containersOfTestRun, guestPrereqs, serveTodoMvc, TEST_LABEL } from "../runtime/guest-support.ts";

/** Todos typed per round. */
const ITEMS = 40;
/** Hard bound on each busy loop's life, s (they are killed when the test ends anyway). */
const BUSY_BOUND_S = 300;
/** The new-todo field of TodoMVC on a 1440×950 screen. */
const NEW_TODO = { x: 720, y: 265 };

let docker: DockerClient;
let image: GuestImage;
let testRun: string;
let app: AppServer;
const desktops: LocalDesktop[] = [];
/** Guests driven side by side (as the 3-seat study does): three browsers compete for the cores too. */
const SEATS = 3;
let busy: ReturnType<typeof Bun.spawn>[] = [];

beforeAll(async () => {
  ({ docker, image, testRun } = await guestPrereqs());
  const override = process.env.HUMANISH_LOCAL_RUNTIME_IMAGE;
  if (override) image = await ensureGuestImage(docker, { env: { HUMANISH_LOCAL_RUNTIME_IMAGE: override } });
  app = serveTodoMvc();
}, 600_000);

afterAll(async () => {
  stopBusyLoops(busy);
  for (const d of desktops) expect((await d.release()).outcome).toBe("released");
  await app?.close();
  if (docker) expect(await containersOfTestRun(docker, testRun)).toEqual([]);
}, 120_000);

/**
 * Ends the busy loops. SIGTERM, not SIGKILL: `timeout` passes a TERM on to its `yes` and exits,
 * while a KILL would end `timeout` alone and leave the loop running for good, orphaned, starving
 * every test after this one.
 */
function stopBusyLoops(loops: ReturnType<typeof Bun.spawn>[]): void {
  for (const p of loops) p.kill("SIGTERM");
}

/** Four busy loops per core, each bounded by `timeout` and ended by {@link stopBusyLoops}. */
function startBusyLoops(): ReturnType<typeof Bun.spawn>[] {
  const n = 4 * Math.max(1, availableParallelism());
  return Array.from({ length: n }, () => Bun.spawn(["timeout", String(BUSY_BOUND_S), "yes"], { stdout: "ignore", stderr: "ignore", stdin: "ignore" }));
}

/** The todo titles on the page, top to bottom (TodoMVC lists them in the order they were added). */
function todoTitles(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("item-"));
}

/** Type and submit ITEMS todos in one guest; returns the titles typed and the titles on the list. */
async function typeTodos(desktop: LocalDesktop): Promise<{ typed: string[]; titles: string[] }> {
  const { executor } = desktop;
  const signal = new AbortController().signal;
  await executor.execute({ kind: "click", x: NEW_TODO.x, y: NEW_TODO.y }, signal);
  const typed: string[] = [];
  for (let i = 1; i <= ITEMS; i++) {
    const title = `item-${String(i).padStart(2, "0")}`;
    typed.push(title);
    await executor.execute({ kind: "type", text: title }, signal);
    await executor.execute({ kind: "keypress", keys: ["Enter"] }, signal);
  }
  // A lost or reordered Enter never heals (two todos merged into one stay merged), so read the
  // list until it holds as many todos as were typed, or a generous deadline passes.
  const deadline = Date.now() + 30_000;
  let titles: string[] = [];
  while (Date.now() < deadline) {
    titles = todoTitles((await executor.observe(signal)).text ?? "");
    if (titles.length >= ITEMS) break;
    await Bun.sleep(250);
  }
  return { typed, titles };
}

test(`${SEATS} guests × ${ITEMS} × (type a todo, press Enter) back to back on a starved host: every todo lands, whole and in order`, async () => {
  for (let s = 0; s < SEATS; s++) {
    desktops.push(
      await allocateDesktop({
        docker,
        image,
        runId: `test-${testRun}`,
        participantId: `p${s + 1}`,
        appPort: app.port,
        initialPath: "/",
        width: 1440,
        height: 950,
        labels: { [TEST_LABEL]: testRun },
        onCreated: () => {},
      }),
    );
  }
  busy = startBusyLoops();
  try {
    const results = await Promise.all(desktops.map(typeTodos));
    for (const r of results) expect(r.titles).toEqual(r.typed);
  } finally {
    stopBusyLoops(busy);
    await Promise.all(busy.map((p) => p.exited));
    busy = [];
  }
}, 600_000);
