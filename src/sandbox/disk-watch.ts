/**
 * The disk bound of a Docker sandbox, second line: a watchdog over the container's writable
 * layer. The first line is engine-enforced — every process runs with `RLIMIT_FSIZE` at the
 * bound (HostConfig.Ulimits `fsize`), so no single file can outgrow it and the write fails with
 * EFBIG/SIGXFSZ. Many files can still add up, and this engine's storage driver (overlay2 on
 * ext4) cannot cap a container's layer (the `size` storage-opt needs xfs with pquota), so the
 * watchdog polls `GET /containers/{id}/json?size=1` (`SizeRw`, bytes written to the layer) and
 * SIGKILLs the container the first time it is over the bound, keeping the reason.
 *
 * A poll costs the engine one walk of the writable layer; one poll is in flight at a time.
 * Between polls a fast writer can overshoot by at most (write speed × interval).
 */
import type { DockerClient } from "../docker/index.ts";

/** Default disk bound of a sandbox, bytes (2 GiB). */
export const DEFAULT_DISK_BYTES = 2 * 1024 ** 3;
/** Default interval between two writable-layer polls, ms. */
export const DEFAULT_DISK_WATCH_MS = 2_000;

/** Why a sandbox was stopped for its disk use. */
export interface DiskLimitBreach {
  /** The bound, bytes. */
  limitBytes: number;
  /** `SizeRw` seen over the bound, bytes. */
  observedBytes: number;
  /** ISO time of the observation. */
  at: string;
  /** Sentence for evidence, e.g. `wrote 3221225472 bytes to its writable layer, over the 2147483648-byte disk limit; stopped`. */
  reason: string;
}

/** A running watchdog. */
export interface DiskWatch {
  /** The breach, once one was seen (the container is then killed). */
  breach(): DiskLimitBreach | undefined;
  /** Resolves once the container was killed and is no longer running after a breach (bounded to 10 s). */
  stopped(): Promise<void>;
  /** Stops polling (idempotent). */
  stop(): void;
}

/**
 * Starts watching container `id`'s writable layer against `limitBytes`. A failed poll (engine
 * busy, container gone) is retried at the next interval; polling ends at `stop()` or a breach.
 */
export function watchDisk(
  docker: DockerClient,
  id: string,
  opts: { limitBytes: number; intervalMs?: number; onBreach?: (b: DiskLimitBreach) => void },
): DiskWatch {
  const intervalMs = opts.intervalMs ?? DEFAULT_DISK_WATCH_MS;
  let stopped = false;
  let breach: DiskLimitBreach | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let halted: Promise<void> = Promise.resolve();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(poll, intervalMs);
    // A watchdog never keeps the process alive by itself.
    (timer as { unref?: () => void }).unref?.();
  };
  const poll = async () => {
    if (stopped) return;
    try {
      const info = await docker.containerInspect(id, { size: true, timeoutMs: Math.max(5_000, intervalMs * 5) });
      const used = info.SizeRw ?? 0;
      if (!stopped && used > opts.limitBytes) {
        breach = {
          limitBytes: opts.limitBytes,
          observedBytes: used,
          at: new Date().toISOString(),
          reason: `the sandbox wrote ${used} bytes to its writable layer, over its ${opts.limitBytes}-byte disk limit; it was stopped`,
        };
        stopped = true;
        halted = docker
          .containerKill(id)
          .then(() => docker.containerWait(id, { condition: "not-running", timeoutMs: 10_000 }))
          .then(
            () => undefined,
            () => undefined,
          );
        await halted;
        opts.onBreach?.(breach);
        return;
      }
    } catch {
      // Retried at the next interval; release ends the watch.
    }
    schedule();
  };
  schedule();
  return {
    breach: () => breach,
    stopped: () => halted,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
