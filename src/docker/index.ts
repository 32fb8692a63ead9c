/**
 * Public API of the Docker Engine API client: our own client over the Unix socket,
 * the 8-byte stream demultiplexer, the JSON progress parser, and a minimal ustar writer/reader.
 *
 * Usage: `const docker = createDockerClient(); await docker.ping();`
 */
export {
  type CallOptions,
  createDockerClient,
  DEFAULT_DOCKER_SOCKET,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DOCKER_API_VERSION,
  DOCKER_HOST_UNSUPPORTED,
  DockerClient,
  type DockerClientOptions,
  type DockerRequestBody,
  dockerClientFor,
  type ImageBuildOptions,
  type ImageBuildResult,
  type ImageLoadResult,
  type ProgressOptions,
  resolveDockerSocket,
} from "./client.ts";
export {
  type ChunkSink,
  concatBytes,
  DEFAULT_MAX_BUFFERED_BYTES,
  type DemuxCallbacks,
  type DemuxedOutput,
  demuxBody,
  MultiplexedStreamDecoder,
  type OutputStream,
  rawBody,
} from "./demux.ts";
export {
  DOCKER_API_ERROR,
  DOCKER_PROGRESS_ERROR,
  DOCKER_STREAM_INVALID,
  DOCKER_TIMEOUT,
  DOCKER_UNAVAILABLE,
  DockerApiError,
  dockerUnavailable,
  isDockerApiError,
} from "./errors.ts";
export { type RunExecOptions, type RunExecResult, runExec, waitExitCode } from "./exec.ts";
export { type JsonMessage, JsonObjectSplitter, type ProgressResult, readProgress } from "./json-stream.ts";
export { type TarEntry, type TarEntryInput, tarPack, tarUnpack } from "./tar.ts";
export type * from "./types.ts";
