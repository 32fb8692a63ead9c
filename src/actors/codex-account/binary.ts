/**
 * Finds the native Codex binary and checks its version. The npm launcher (`bin/codex.js`) is
 * never run: it would start Node and forward the whole environment, so it is resolved to the
 * platform package's native binary, which humanish launches directly.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { HumanishError } from "../../errors.ts";
import { parseCodexVersion } from "../codex-exec/command.ts";

/** The Rust target triple of the qualified platform's native package. */
export const LINUX_X64_TRIPLE = "x86_64-unknown-linux-musl";
/** The npm package holding the linux-x64 native binary. */
export const LINUX_X64_PACKAGE = "codex-linux-x64";

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when the file starts with the ELF magic (4 bytes read; the binary, never a secret). */
export function isElf(p: string): boolean {
  const fd = openSync(p, "r");
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    closeSync(fd);
  }
}

/** Native binary of an `@openai/codex` package root, where npm or bun install the platform package. */
export function nativeFromPackageRoot(pkgRoot: string): string | undefined {
  const rel = join(LINUX_X64_PACKAGE, "vendor", LINUX_X64_TRIPLE, "bin", "codex");
  const candidates = [join(pkgRoot, "node_modules", "@openai", rel), join(dirname(pkgRoot), rel), join(pkgRoot, "vendor", LINUX_X64_TRIPLE, "bin", "codex")];
  return candidates.find((c) => existsSync(c) && isExecutableFile(c));
}

/**
 * Resolves `codex` to its native ELF binary: the first executable `codex` on the absolute PATH
 * entries (no shell), followed through symlinks; an npm launcher is mapped to the native binary.
 * @throws HumanishError `HUMANISH_CODEX_UNAVAILABLE` when none is found or it is not native.
 */
export function resolveNativeCodex(pathEnv: string | undefined): string {
  for (const dir of (pathEnv ?? "").split(":")) {
    if (!isAbsolute(dir)) continue;
    const cand = join(dir, "codex");
    if (!isExecutableFile(cand)) continue;
    const real = realpathSync(cand);
    if (isElf(real)) return real;
    if (real.endsWith(join("@openai", "codex", "bin", "codex.js"))) {
      const native = nativeFromPackageRoot(dirname(dirname(real)));
      if (native && isElf(native)) return realpathSync(native);
      throw new HumanishError("HUMANISH_CODEX_UNAVAILABLE", `${cand} is the npm launcher but its ${LINUX_X64_PACKAGE} native package is missing`, {
        next: "Reinstall the pinned CLI: npm install --global @openai/codex@0.171.0",
      });
    }
    throw new HumanishError("HUMANISH_CODEX_UNAVAILABLE", `${cand} resolves to ${real}, which is neither a native Codex binary nor the npm launcher`, {
      next: "Put the npm-installed `codex` first on PATH.",
    });
  }
  throw new HumanishError("HUMANISH_CODEX_UNAVAILABLE", "no `codex` executable on PATH", {
    next: "Install the pinned CLI: npm install --global @openai/codex@0.171.0",
  });
}

/**
 * Runs `<binary> --version` in a scrubbed env (15 s, ≤ 4096 bytes of output).
 * @returns the exact version printed as `codex-cli <version>`.
 * @throws HumanishError `HUMANISH_CODEX_UNSUPPORTED_VERSION` when the output has another shape.
 */
export async function probeVersion(binary: string, env: Record<string, string>, timeoutMs = 15_000): Promise<string> {
  const proc = Bun.spawn([binary, "--version"], { env, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  try {
    const chunks: Uint8Array[] = [];
    let n = 0;
    for await (const c of proc.stdout) {
      n += c.length;
      if (n > 4096) {
        proc.kill("SIGKILL");
        break;
      }
      chunks.push(c);
    }
    await proc.exited;
    const out = Buffer.concat(chunks).toString("utf8");
    const v = n <= 4096 ? parseCodexVersion(out) : undefined;
    if (!v)
      throw new HumanishError("HUMANISH_CODEX_UNSUPPORTED_VERSION", `${binary} --version did not print exactly \`codex-cli <version>\``, {
        next: "Install the pinned CLI: npm install --global @openai/codex@0.171.0",
      });
    return v;
  } finally {
    clearTimeout(timer);
  }
}
