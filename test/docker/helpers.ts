/** Shared helpers of the Docker tests. */
import { HumanishError } from "../../src/errors.ts";

export { concatBytes, demuxBody, MultiplexedStreamDecoder } from "../../src/docker/index.ts";

/** True when `e` is a HumanishError with this code. */
export function isHumanishErrorLike(e: unknown, code: string): boolean {
  return e instanceof HumanishError && e.code === code;
}

/** Awaits `p` and returns the HumanishError it rejected with (fails when it resolved). */
export async function rejection(p: Promise<unknown>): Promise<HumanishError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HumanishError) return e;
    throw new Error(`expected a HumanishError, got ${String(e)}`);
  }
  throw new Error("expected a rejection, but the promise resolved");
}

/** A unique label value for the containers one test file creates. */
export function testRunId(name: string): string {
  return `test-${name}-${process.pid}-${Date.now().toString(36)}`;
}
