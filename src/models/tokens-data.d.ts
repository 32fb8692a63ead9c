/**
 * gpt-tokenizer's o200k_base rank file imported as a file path (`with { type: "file" }` in
 * tokens.ts), so the compiled binary carries it: the default export is the path readFileSync
 * reads (the real path from source, a `/$bunfs/…` path in the compiled binary).
 */
declare module "gpt-tokenizer/data/o200k_base.tiktoken" {
  const path: string;
  export default path;
}
