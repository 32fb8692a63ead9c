/**
 * The seam between the CLI and a route. The shapes live with the study runner (every route runs
 * through it, and the runner never imports a route); they are re-exported here for the routes.
 */
export type { ProgressEvent, StudyContext, StudyResult, TaskOutcome } from "../study/context.ts";
