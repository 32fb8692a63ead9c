/**
 * The sandbox image with the pinned Codex CLI baked in, for Codex tests that study the run and
 * not the install.
 *
 * A Codex seat installs `@openai/codex` (about 165 MB) into its sandbox unless the image already
 * carries the exact version, which the lane then records and does not install again. A test file
 * that runs many Codex studies builds this image once per engine (a `docker build` on top of the
 * local sandbox image, reused while its tag exists) and creates its sandboxes from it; at least
 * one test of the suite keeps the plain sandbox image, so the real install stays tested.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxImageTag } from "../../src/runtime/recipes.ts";
import type { SandboxProvider } from "../../src/sandbox/types.ts";
import { npmCacheProvider } from "./npm-cache.ts";
import { dockerSocketPath } from "./prereq.ts";

/** The Codex version the committed labs pin. */
export const PINNED_CODEX = "0.171.0";

/** Tag of the Codex-carrying image for this build's sandbox image (outside the humanish repos, so `runtime prune` leaves it). */
export function codexImageTag(version = PINNED_CODEX): string {
  const rev = sandboxImageTag().split(":")[1];
  return `humanish-test-codex-sandbox:${rev}-${version}`;
}

async function docker(args: string[], cwd?: string): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(["docker", "--host", `unix://${dockerSocketPath()}`, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out: `${out}${err}` };
}

let built: Promise<string> | undefined;

/**
 * Builds (once per engine and version) and returns the tag of the sandbox image with Codex
 * `version` installed globally as root; the image's user and command stay the sandbox's.
 * @throws Error with docker's output when the build fails.
 */
export function codexSandboxImage(version = PINNED_CODEX): Promise<string> {
  built ??= (async () => {
    const tag = codexImageTag(version);
    if ((await docker(["image", "inspect", tag])).code === 0) return tag;
    const dir = mkdtempSync(join(tmpdir(), "humanish-codex-image-"));
    try {
      // Machines behind an intercepting HTTPS proxy hand npm the proxy's CA for the build only.
      const ca = process.env.HUMANISH_SANDBOX_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS;
      if (ca) writeFileSync(join(dir, "ca.crt"), await Bun.file(ca).bytes());
      writeFileSync(
        join(dir, "Dockerfile"),
        [
          `FROM ${sandboxImageTag()}`,
          "USER root",
          ...(ca ? ["COPY ca.crt /tmp/humanish-build-ca.crt"] : []),
          `RUN ${ca ? "NODE_EXTRA_CA_CERTS=/tmp/humanish-build-ca.crt " : ""}npm install --global --no-audit --no-fund --loglevel=error @openai/codex@${version} && rm -rf /root/.npm /tmp/humanish-build-ca.crt`,
          "USER user",
          "",
        ].join("\n"),
      );
      const r = await docker(["build", "-q", "-t", tag, "."], dir);
      if (r.code !== 0) throw new Error(`building ${tag} failed:\n${r.out.slice(-2000)}`);
      return tag;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return built;
}

/**
 * A Docker provider (sharing the run's npm cache, see {@link npmCacheProvider}) whose sandboxes
 * of the default sandbox image start from the Codex-carrying image instead.
 */
export function codexImageProvider(inner?: SandboxProvider): SandboxProvider {
  const base = npmCacheProvider(inner);
  const plain = sandboxImageTag();
  return {
    provider: base.provider,
    create: async (opts) => base.create(opts.image === plain ? { ...opts, image: await codexSandboxImage() } : opts),
  };
}
