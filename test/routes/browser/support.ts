/** Helpers shared by the browser-route tests. */
import type { LabConfig } from "../../../src/lab/index.ts";
import type { StudyContext } from "../../../src/routes/types.ts";
import { servedAppLab } from "../../support/browser-study.ts";

/** A StudyContext for calling `runBrowserStudy` directly (no CLI), in project `cwd`. */
export function studyContext(lab: LabConfig, runId: string, cwd: string, mode: "live" | "dry-run" = "live"): StudyContext<LabConfig> {
  return {
    cwd,
    lab,
    labSource: { ref: "labs/test.yaml", sha256: "0".repeat(64) },
    labWarnings: [],
    runId,
    mode,
    env: { PATH: process.env.PATH },
    signal: new AbortController().signal,
    progress: () => undefined,
  };
}

/**
 * A live scripted-browser lab on `http://127.0.0.1:<port>/` serving static `root`; `actorBody`
 * is the YAML of the actor's remaining keys (indented 4 spaces), e.g. tasks and steps.
 * @throws Error with the loader's message when the YAML does not parse.
 */
export function scriptedBrowserLab(opts: { port: number; id: string; root: string; actorBody: string }): LabConfig {
  return servedAppLab({ id: opts.id, port: opts.port, root: opts.root, type: "scripted-browser", actor: opts.actorBody });
}

/** Raw HTTP/1.1 GET of `target` exactly as written (no client-side path normalisation). */
export async function rawGet(port: number, target: string): Promise<number> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(s) {
          s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
        },
        data(_s, d) {
          chunks.push(Buffer.from(d));
        },
        close() {
          resolve();
        },
        error(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
  const head = Buffer.concat(chunks).toString("latin1");
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
}
