/**
 * Files of the embedded web apps imported as file paths (`import p from "…" with { type: "file" }`
 * in `embedded-app.ts`): the default export is the path Bun.file reads (the real path from source,
 * a `/$bunfs/…` path in the compiled binary). One declaration per file, so no other import of a
 * `.js`/`.css`/`.png` loses its type checking.
 */
declare module "*/node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/base.css" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/base.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/bower_components/todomvc-common/bg.png" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/app.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/controller.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/helpers.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/model.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/store.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/template.js" {
  const path: string;
  export default path;
}
declare module "*/node_modules/todomvc/examples/vanillajs/js/view.js" {
  const path: string;
  export default path;
}
