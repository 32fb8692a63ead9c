/**
 * The actor registry as the catalog everything derives from: every browser actor type has a
 * factory behind the BrowserParticipant seam (and every factory a registry entry), the lab
 * schema accepts exactly the registered types per route, and what the registry says a type
 * records (protocol, lane) is in the bundle schema's literal enums, which stay as they are for
 * old bundles.
 */
import { describe, expect, test } from "bun:test";
import { listActors } from "../../src/actor-registry/registry.ts";
import { BROWSER_PARTICIPANTS } from "../../src/actors/browser-participant/index.ts";
import { ActorTraceSchema } from "../../src/bundle/schemas.ts";
import { ROUTE_ACTOR_TYPES } from "../../src/lab/routing.ts";
import { BrowserActorSchema } from "../../src/lab/schema-browser.ts";
import { TerminalActorSchema } from "../../src/lab/schema-terminal.ts";

const browserTypes = listActors()
  .filter((a) => a.capabilities.lanes.some((l) => l !== "terminal"))
  .map((a) => a.type);

describe("actor catalog", () => {
  test("every browser actor type has exactly one participant factory", () => {
    expect(Object.keys(BROWSER_PARTICIPANTS).sort()).toEqual([...browserTypes].sort());
    expect(ROUTE_ACTOR_TYPES.browser).toEqual(browserTypes);
  });

  test("the lab schema's actor literals per route are the registry's types", () => {
    const literals = (schema: { options: readonly { shape: { type: { value: string } } }[] }) => schema.options.map((o) => o.shape.type.value).sort();
    expect(literals(BrowserActorSchema as never)).toEqual([...ROUTE_ACTOR_TYPES.browser].sort());
    expect(literals(TerminalActorSchema as never)).toEqual([...ROUTE_ACTOR_TYPES.terminal].sort());
  });

  test("catalog ⊆ bundle schema: every protocol and lane an actor records is in the trace schema's enums", () => {
    const protocols = ActorTraceSchema.shape.protocol.options as readonly string[];
    const lanes = ActorTraceSchema.shape.lane.options as readonly string[];
    for (const a of listActors()) {
      expect(protocols).toContain(a.protocol);
      for (const l of a.capabilities.lanes) expect(lanes).toContain(l);
    }
  });

  test("each entry is consistent: a model participant is priced some way, a scripted one spends nothing", () => {
    for (const a of listActors()) {
      expect(a.targets.length).toBeGreaterThan(0);
      if (a.modelParticipant) expect(a.pricing).not.toBe("none");
      else expect([a.pricing, a.capUnits.length, a.runtimeKeyNames.length]).toEqual(["none", 0, 0]);
      if (a.pricing === "account-unknown") expect(a.capUnits).toEqual([]);
    }
  });
});
