#!/usr/bin/env bun
/** The `humanish` entry point (also the compiled single binary's). */
import { processIO } from "./output.ts";
import { runCli } from "./run.ts";

const code = await runCli(process.argv.slice(2), processIO());
process.exitCode = code;
