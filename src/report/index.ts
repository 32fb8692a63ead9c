/**
 * The people-facing report surfaces (issue 5): the self-contained HTML study report of a run
 * and the loopback run-library server. The CLI (`humanish report`, `humanish serve`) and the
 * routes (after a completed `lab run`) import from here only.
 */
export { renderReportHtml, renderLibraryIndexHtml, escapeHtml, formatUsd, formatDuration, REPORT_CSP } from "./html.ts";
export { loadReportModel, readRunBundle, type LoadReportOptions } from "./load.ts";
export { writeReport, splitRunDir, REPORT_PATH, type WriteReportResult } from "./write.ts";
export { startLibraryServer, checkBind, type LibraryServer, type LibraryServerOptions } from "./server.ts";
export { readContainedFile, safeSegments, type ContainedRead, type ContainedReadFailure } from "./files.ts";
export type * from "./model.ts";
