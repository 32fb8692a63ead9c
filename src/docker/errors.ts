/**
 * Errors of the Docker Engine API client.
 *
 * Every failure is a `HumanishError`: `DockerApiError` (`HUMANISH_DOCKER_API_ERROR`) when the engine
 * answered with a non-success HTTP status, `HUMANISH_DOCKER_UNAVAILABLE` when the socket could not be
 * reached at all, `HUMANISH_DOCKER_TIMEOUT` when a request outlived its deadline, and
 * `HUMANISH_DOCKER_STREAM_INVALID` when a response body broke the Engine's framing rules.
 */
import { errorMessage, HumanishError } from "../errors.ts";

/** Code of an error response from the engine (any non-2xx/304 status). */
export const DOCKER_API_ERROR = "HUMANISH_DOCKER_API_ERROR";
/** Code when the Docker socket cannot be reached (no daemon, wrong path, permission). */
export const DOCKER_UNAVAILABLE = "HUMANISH_DOCKER_UNAVAILABLE";
/** Code when a request did not finish within its deadline. */
export const DOCKER_TIMEOUT = "HUMANISH_DOCKER_TIMEOUT";
/** Code when a response body is malformed (bad multiplexed frame, bad JSON message, bad tar). */
export const DOCKER_STREAM_INVALID = "HUMANISH_DOCKER_STREAM_INVALID";
/** Code when a build or load reported an `errorDetail`/`error` line in its JSON progress stream. */
export const DOCKER_PROGRESS_ERROR = "HUMANISH_DOCKER_PROGRESS_ERROR";

/**
 * The engine answered an API call with an error status.
 *
 * `status` is the HTTP status (e.g. 404 no such container, 409 conflict, 500 server error);
 * `engineMessage` is the `message` field of the engine's JSON error body (or the raw body text);
 * `operation` names the Engine API operation (e.g. `ContainerCreate`).
 */
export class DockerApiError extends HumanishError {
  readonly status: number;
  readonly engineMessage: string;
  readonly operation: string;

  constructor(operation: string, status: number, engineMessage: string, path: string) {
    super(DOCKER_API_ERROR, `Docker Engine ${operation} (${path}) failed with HTTP ${status}: ${engineMessage}`, {
      next: nextStepFor(status),
      details: { operation, status, engineMessage },
    });
    this.name = "DockerApiError";
    this.status = status;
    this.engineMessage = engineMessage;
    this.operation = operation;
  }
}

function nextStepFor(status: number): string {
  if (status === 404) return "check that the named image/container exists (`docker image ls`, `docker ps -a`)";
  if (status === 409) return "the resource is in a conflicting state (name in use, container not running); inspect it with `docker inspect`";
  if (status === 400) return "the request was rejected as invalid; check the options passed to humanish";
  return "check the Docker daemon logs (`journalctl -u docker`) and retry";
}

/** True when `e` is a `DockerApiError`, optionally with the given HTTP status. */
export function isDockerApiError(e: unknown, status?: number): e is DockerApiError {
  return e instanceof DockerApiError && (status === undefined || e.status === status);
}

/** The error thrown when the socket cannot be reached. */
export function dockerUnavailable(socketPath: string, cause: unknown): HumanishError {
  const why = errorMessage(cause);
  return new HumanishError(DOCKER_UNAVAILABLE, `The Docker engine is not reachable on unix socket ${socketPath}: ${why}`, {
    next: "start dockerd (e.g. `sudo systemctl start docker` or `sudo dockerd &`) / set DOCKER_HOST=unix:///path/to/docker.sock",
    details: { socketPath },
    cause,
  });
}

/** The error thrown when a request outlives its deadline. */
export function dockerTimeout(operation: string, path: string, timeoutMs: number): HumanishError {
  return new HumanishError(DOCKER_TIMEOUT, `Docker Engine ${operation} (${path}) did not answer within ${timeoutMs} ms`, {
    next: "check that dockerd is responsive (`docker info`); the machine may be overloaded",
    details: { operation, timeoutMs },
  });
}

/** The error thrown for a malformed response body. */
export function dockerStreamInvalid(what: string, details?: Record<string, unknown>): HumanishError {
  return new HumanishError(DOCKER_STREAM_INVALID, `Malformed Docker Engine response: ${what}`, {
    next: "check the Docker engine version (API v1.41+ required) and retry",
    ...(details ? { details } : {}),
  });
}
