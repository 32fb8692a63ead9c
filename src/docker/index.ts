/**
 * Public API of the Docker Engine API client (issue 2 §5): our own client over the Unix socket,
 * the 8-byte stream demultiplexer, the JSON progress parser, and a minimal ustar writer/reader.
 *
 * Usage: `const docker = createDockerClient(); await docker.ping();`
 */
export {
  DockerClient,
  createDockerClient,
  resolveDockerSocket,
  DEFAULT_DOCKER_SOCKET,
  DOCKER_API_VERSION,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type DockerClientOptions,
  type CallOptions,
  type ProgressOptions,
  type ImageBuildOptions,
  type ImageBuildResult,
  type ImageLoadResult,
  type DockerRequestBody,
} from "./client.ts";
export {
  DockerApiError,
  isDockerApiError,
  dockerUnavailable,
  DOCKER_API_ERROR,
  DOCKER_UNAVAILABLE,
  DOCKER_TIMEOUT,
  DOCKER_STREAM_INVALID,
  DOCKER_PROGRESS_ERROR,
} from "./errors.ts";
export { MultiplexedStreamDecoder, demuxBody, rawBody, concatBytes, DEFAULT_MAX_BUFFERED_BYTES, type OutputStream, type ChunkSink, type DemuxedOutput, type DemuxCallbacks } from "./demux.ts";
export { JsonObjectSplitter, readProgress, type JsonMessage, type ProgressResult } from "./json-stream.ts";
export { tarPack, tarUnpack, type TarEntry, type TarEntryInput } from "./tar.ts";
export { runExec, waitExitCode, type RunExecResult, type RunExecOptions } from "./exec.ts";
export type * from "./types.ts";
