/**
 * The bytes of the embedded web apps named in `src/lab/embedded-apps.ts` (a lab's
 * `subject.serve.static.root: "embedded:<name>"`). Each file is imported with
 * `with { type: "file" }`: running from source the import is the file's real path in
 * `node_modules`; in the `bun build --compile` binary it is a `/$bunfs/…` path inside the
 * executable. Either way `Bun.file` reads it, so the served bytes are exactly the npm package's.
 */

import todoBaseCss from "../../../node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/base.css" with { type: "file" };
import todoBaseJs from "../../../node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/base.js" with { type: "file" };
import todoBgPng from "../../../node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/bg.png" with { type: "file" };
import todoIndexHtml from "../../../node_modules/todomvc/examples/vanillajs/index.html" with { type: "file" };
import todoAppJs from "../../../node_modules/todomvc/examples/vanillajs/js/app.js" with { type: "file" };
import todoControllerJs from "../../../node_modules/todomvc/examples/vanillajs/js/controller.js" with { type: "file" };
import todoHelpersJs from "../../../node_modules/todomvc/examples/vanillajs/js/helpers.js" with { type: "file" };
import todoModelJs from "../../../node_modules/todomvc/examples/vanillajs/js/model.js" with { type: "file" };
import todoStoreJs from "../../../node_modules/todomvc/examples/vanillajs/js/store.js" with { type: "file" };
import todoTemplateJs from "../../../node_modules/todomvc/examples/vanillajs/js/template.js" with { type: "file" };
import todoViewJs from "../../../node_modules/todomvc/examples/vanillajs/js/view.js" with { type: "file" };
import { sha256Hex } from "../../bytes/sha256.ts";
import { HumanishError } from "../../errors.ts";
import { EMBEDDED_APP_NAMES, EMBEDDED_ROOT_PREFIX, type EmbeddedAppName, isEmbeddedAppName } from "../../lab/embedded-apps.ts";

/** Where an embedded app's files come from: the npm package and the directory inside it. */
export interface EmbeddedAppSource {
  /** `name@version` of the npm package the files were taken from at build time. */
  package: string;
  /** Directory inside the package, e.g. `examples/vanillajs`. */
  dir: string;
  /** URL path (relative, `/`-separated, no leading `/`) → imported file path (real or `/$bunfs/…`). */
  files: Readonly<Record<string, string>>;
}

function importedPath(v: unknown, rel: string): string {
  if (typeof v !== "string") throw new TypeError(`embedded app file ${rel} was not imported as a file path`);
  return v;
}

/** Every embedded app's files, keyed by name (the compiler checks it covers the closed list). */
export const EMBEDDED_APP_SOURCES: Readonly<Record<EmbeddedAppName, EmbeddedAppSource>> = {
  "todomvc-vanillajs": {
    package: "todomvc@0.1.1",
    dir: "examples/vanillajs",
    files: {
      "index.html": importedPath(todoIndexHtml, "index.html"),
      "bower_components/todomvc-common/base.css": importedPath(todoBaseCss, "base.css"),
      "bower_components/todomvc-common/base.js": importedPath(todoBaseJs, "base.js"),
      "bower_components/todomvc-common/bg.png": importedPath(todoBgPng, "bg.png"),
      "js/app.js": importedPath(todoAppJs, "js/app.js"),
      "js/controller.js": importedPath(todoControllerJs, "js/controller.js"),
      "js/helpers.js": importedPath(todoHelpersJs, "js/helpers.js"),
      "js/model.js": importedPath(todoModelJs, "js/model.js"),
      "js/store.js": importedPath(todoStoreJs, "js/store.js"),
      "js/template.js": importedPath(todoTemplateJs, "js/template.js"),
      "js/view.js": importedPath(todoViewJs, "js/view.js"),
    },
  },
};

/** One file of a loaded embedded app. */
export interface EmbeddedAppFile {
  /** URL path without the leading `/`, e.g. `js/app.js`. */
  path: string;
  bytes: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`. */
  sha256: string;
  /** MIME type by extension (Bun's table), e.g. `text/css;charset=utf-8`. */
  contentType: string;
}

/** An embedded app read into memory, with its provenance. */
export interface EmbeddedApp {
  name: EmbeddedAppName;
  package: string;
  dir: string;
  /** Files sorted by path. */
  files: EmbeddedAppFile[];
  /**
   * Lowercase hex SHA-256 over the app: the hash of the lines `<file sha256>  <path>\n` for every
   * file in path order (the `sha256sum` listing format), so it changes when any byte or name does.
   */
  sha256: string;
  /** Total bytes of all files. */
  bytes: number;
}

/**
 * Read the embedded app `name` into memory and hash it.
 * @throws HumanishError `HUMANISH_BROWSER_SERVE_FAILED` when `name` is not in the closed list or a
 *   file cannot be read (a broken build or a missing `todomvc` dependency when running from source).
 */
export async function loadEmbeddedApp(name: string): Promise<EmbeddedApp> {
  if (!isEmbeddedAppName(name)) {
    throw new HumanishError("HUMANISH_BROWSER_SERVE_FAILED", `subject.serve.static.root ${EMBEDDED_ROOT_PREFIX}${name} names no embedded app`, {
      next: `use one of ${EMBEDDED_APP_NAMES.map((n) => EMBEDDED_ROOT_PREFIX + n).join(", ")}, or a directory relative to the project`,
    });
  }
  const src = EMBEDDED_APP_SOURCES[name];
  const files: EmbeddedAppFile[] = [];
  for (const path of Object.keys(src.files).sort()) {
    const file = Bun.file(src.files[path]!);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (e) {
      throw new HumanishError("HUMANISH_BROWSER_SERVE_FAILED", `embedded app ${name}: file ${path} cannot be read (${(e as Error).message})`, {
        next: `reinstall the dependency ${src.package} (from source) or rebuild humanish`,
      });
    }
    files.push({ path, bytes, sha256: sha256Hex(bytes), contentType: Bun.file(path).type });
  }
  const listing = files.map((f) => `${f.sha256}  ${f.path}\n`).join("");
  return { name, package: src.package, dir: src.dir, files, sha256: sha256Hex(listing), bytes: files.reduce((n, f) => n + f.bytes.byteLength, 0) };
}
