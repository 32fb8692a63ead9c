/**
 * The people-facing report surfaces: the self-contained HTML study report of a run
 * and the loopback run-library server. The CLI (`humanish report`, `humanish serve`) and the
 * routes (after a completed `lab run`) import from here only.
 */

export { type ContainedRead, type ContainedReadFailure, readContainedFile, safeSegments } from "./files.ts";
export { escapeHtml, formatDuration, formatUsd, REPORT_CSP, renderLibraryIndexHtml, renderReportHtml } from "./html.ts";
export { type LoadReportOptions, loadReportModel, readRunBundle } from "./load.ts";
export type * from "./model.ts";
export { checkBind, type LibraryServer, type LibraryServerOptions, startLibraryServer } from "./server.ts";
export { REPORT_PATH, splitRunDir, type WriteReportResult, writeReport } from "./write.ts";
