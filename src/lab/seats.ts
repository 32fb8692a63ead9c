/**
 * Seats: the participants one study runs. A lab names them in exactly one way on `actors[0]`:
 * `count` (seats `p1`…`pN`), `lanes[]` (one seat per lane, named by its id) or `roster[]`
 * (`{id, count}` → `<id>-01`…`<id>-NN`). This module checks that choice and expands it into one
 * plain list; it is pure (no I/O) and shared by parse-time checks and the study runner.
 */
import { DEVICE_PRESETS, DEVICES_BY_COUNT, type DeviceName, type DevicePreset } from "./schema-browser.ts";
import { MAX_SEATS } from "./schema-common.ts";

/** One seat as declared: its id and the per-seat fields of its lane or roster entry. */
export interface SeatSpec {
  id: string;
  /** 0-based position in the study (stable order of the bundle and the report). */
  index: number;
  persona?: string;
  /** Browser route: the device preset this seat runs on. */
  device?: string;
  /** Appended to this seat's brief. */
  instruction?: string;
}

/** The seat keys of an actor, as parsed. */
export interface SeatDeclaration {
  count?: number;
  lanes?: readonly { id: string; persona?: string; device?: string; instruction?: string }[];
  roster?: readonly { id: string; count: number; persona?: string; device?: string; instruction?: string }[];
}

/** A problem with the seat declaration: its path under `actors[0]` and a message. */
export interface SeatProblem {
  path: PropertyKey[];
  message: string;
}

/**
 * Check the seat keys of `actors[0]` given the raw (pre-default) mapping `raw` (which says
 * whether `count` was written) and the parsed `decl`. Problems: more than one of
 * `count`/`lanes`/`roster`, duplicate seat ids (after roster expansion), more than
 * {@link MAX_SEATS} seats, or a device that is not a preset (browser) or any device at all
 * (terminal, which has no devices).
 */
export function seatProblems(raw: Record<string, unknown>, decl: SeatDeclaration, route: "terminal" | "browser"): SeatProblem[] {
  const problems: SeatProblem[] = [];
  const given = (["count", "lanes", "roster"] as const).filter((k) => raw[k] !== undefined);
  if (given.length > 1) {
    problems.push({
      path: ["actors", 0, given[1]!],
      message: `cannot be combined with ${given[0]}: a lab names its seats with exactly one of count, lanes or roster`,
    });
    return problems;
  }
  const entries = decl.lanes ?? decl.roster ?? [];
  const key = decl.lanes ? "lanes" : "roster";
  entries.forEach((e, i) => {
    if (e.device === undefined) return;
    if (route === "terminal")
      problems.push({ path: ["actors", 0, key, i, "device"], message: "only acts on the browser route (a terminal seat has no screen); remove it" });
    else if (!(e.device in DEVICE_PRESETS))
      problems.push({
        path: ["actors", 0, key, i, "device"],
        message: `\`${e.device}\` is not a device; use one of ${Object.keys(DEVICE_PRESETS).join(", ")}`,
      });
  });
  const seen = new Map<string, string>();
  const ids = expandIds(decl);
  ids.forEach(({ id, where }) => {
    const prior = seen.get(id);
    if (prior !== undefined) problems.push({ path: where, message: `seat id \`${id}\` repeats ${prior}; seat ids must be unique` });
    else seen.set(id, `actors[0].${where.slice(2).join(".")}`);
  });
  if (ids.length > MAX_SEATS) problems.push({ path: ["actors", 0, key], message: `declares ${ids.length} seats; a study runs at most ${MAX_SEATS}` });
  return problems;
}

function expandIds(decl: SeatDeclaration): { id: string; where: PropertyKey[] }[] {
  if (decl.lanes) return decl.lanes.map((l, i) => ({ id: l.id, where: ["actors", 0, "lanes", i, "id"] }));
  if (decl.roster) return decl.roster.flatMap((r, i) => rosterIds(r.id, r.count).map((id) => ({ id, where: ["actors", 0, "roster", i, "id"] })));
  return [];
}

function rosterIds(id: string, count: number): string[] {
  return Array.from({ length: count }, (_, k) => `${id}-${String(k + 1).padStart(2, "0")}`);
}

/** The seats of a validated actor, in study order. `count` absent and no lanes/roster = one seat `p1`. */
export function expandSeats(decl: SeatDeclaration): SeatSpec[] {
  const pick = (e: { persona?: string; device?: string; instruction?: string }) => ({
    ...(e.persona !== undefined ? { persona: e.persona } : {}),
    ...(e.device !== undefined ? { device: e.device } : {}),
    ...(e.instruction !== undefined ? { instruction: e.instruction } : {}),
  });
  if (decl.lanes) return decl.lanes.map((l, index) => ({ id: l.id, index, ...pick(l) }));
  if (decl.roster) {
    const out: SeatSpec[] = [];
    for (const r of decl.roster) for (const id of rosterIds(r.id, r.count)) out.push({ id, index: out.length, ...pick(r) });
    return out;
  }
  return Array.from({ length: decl.count ?? 1 }, (_, index) => ({ id: `p${index + 1}`, index }));
}

/**
 * The device of every seat of a browser actor: an explicit lane device wins; `count: 2` without
 * lanes keeps its old meaning (desktop + mobile); every other seat runs on the desktop preset.
 */
export function browserSeatDevices(decl: SeatDeclaration): { seat: SeatSpec; name: DeviceName; preset: DevicePreset }[] {
  const seats = expandSeats(decl);
  const pair = !decl.lanes && !decl.roster && decl.count === 2 ? DEVICES_BY_COUNT[2] : undefined;
  return seats.map((seat, i) => {
    const name = (seat.device as DeviceName | undefined) ?? pair?.[i] ?? "desktop";
    return { seat, name, preset: DEVICE_PRESETS[name] };
  });
}

/** True when a browser actor uses the old `count: 2` = desktop + mobile meaning (the parse step warns). */
export function isDevicePair(decl: SeatDeclaration): boolean {
  return !decl.lanes && !decl.roster && decl.count === 2;
}
