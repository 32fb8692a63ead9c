/**
 * Request and response shapes of the Docker Engine API v1.41 operations this client uses.
 * Only the fields humanish reads or writes are typed; the engine may return more.
 * Field names follow the Engine API exactly (PascalCase).
 */

/** `GET /version`. */
export interface EngineVersion {
  Version: string;
  ApiVersion: string;
  MinAPIVersion?: string;
  Os: string;
  Arch: string;
  KernelVersion?: string;
  [key: string]: unknown;
}

/** `GET /images/{name}/json` (subset). `Size` is bytes; `Created` is an ISO time. */
export interface ImageInspect {
  Id: string;
  RepoTags: string[] | null;
  Created: string;
  Size: number;
  Config: { Labels: Record<string, string> | null; User?: string; WorkingDir?: string; Env?: string[] | null } | null;
  [key: string]: unknown;
}

/** One row of `GET /images/json` (subset). Sizes in bytes. */
export interface ImageSummary {
  Id: string;
  RepoTags: string[] | null;
  Labels: Record<string, string> | null;
  Size: number;
  Created: number;
  [key: string]: unknown;
}

/** `GET /system/df` (subset). Sizes in bytes; `SharedSize` = bytes shared with other images. */
export interface SystemDf {
  /** Bytes of every image layer in the engine (shared layers once). */
  LayersSize: number;
  Images: { Id: string; RepoTags: string[] | null; Size: number; SharedSize: number; Containers: number; Labels?: Record<string, string> | null }[];
  [key: string]: unknown;
}

/** One ulimit of a container (`fsize` in bytes, `nofile` in descriptors, …). */
export interface Ulimit {
  Name: string;
  Soft: number;
  Hard: number;
}

/** `HostConfig` of a container create (subset). Memory in bytes, NanoCpus in 1e-9 CPUs. */
export interface HostConfig {
  Init?: boolean;
  NetworkMode?: string;
  CapDrop?: string[];
  CapAdd?: string[];
  SecurityOpt?: string[];
  Memory?: number;
  MemorySwap?: number;
  NanoCpus?: number;
  PidsLimit?: number;
  ReadonlyRootfs?: boolean;
  AutoRemove?: boolean;
  ShmSize?: number;
  Tmpfs?: Record<string, string>;
  Ulimits?: Ulimit[];
  Binds?: string[];
  Devices?: { PathOnHost: string; PathInContainer: string; CgroupPermissions: string }[];
  [key: string]: unknown;
}

/** Body of `POST /containers/create` (subset). */
export interface ContainerCreateBody {
  Image: string;
  Cmd?: string[];
  Entrypoint?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  Labels?: Record<string, string>;
  Tty?: boolean;
  OpenStdin?: boolean;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  StopSignal?: string;
  NetworkDisabled?: boolean;
  HostConfig?: HostConfig;
  [key: string]: unknown;
}

/** `GET /containers/{id}/json` (subset). */
export interface ContainerInspect {
  Id: string;
  Name: string;
  Created: string;
  State: { Status: string; Running: boolean; ExitCode: number; Pid: number; OOMKilled?: boolean; Error?: string };
  Config: { Image: string; Env: string[] | null; Labels: Record<string, string> | null; User: string; WorkingDir: string; Cmd: string[] | null };
  HostConfig: HostConfig;
  /** `sha256:…` id of the image the container was created from. */
  Image?: string;
  /** Bytes written to the container's writable layer (only with `?size=1`). */
  SizeRw?: number;
  /** Networks the container is attached to, by network name (empty when it has none). */
  NetworkSettings?: { Networks?: Record<string, { NetworkID?: string; IPAddress?: string }> | null };
  [key: string]: unknown;
}

/** One row of `GET /containers/json`. */
export interface ContainerSummary {
  Id: string;
  Names: string[];
  Image: string;
  /** `sha256:…` id of the container's image (exact, whatever tag `Image` shows). */
  ImageID: string;
  State: string;
  Status: string;
  Labels: Record<string, string>;
  Created: number;
  [key: string]: unknown;
}

/** Body of `POST /containers/{id}/exec`. There is deliberately no `Privileged` field. */
export interface ExecCreateBody {
  Cmd: string[];
  Env?: string[];
  WorkingDir?: string;
  User?: string;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  AttachStdin?: boolean;
  Tty?: boolean;
}

/** `GET /exec/{id}/json` (subset). `ExitCode` is null while running. `Pid` is the host pid. */
export interface ExecInspect {
  ID: string;
  Running: boolean;
  ExitCode: number | null;
  Pid: number;
  ContainerID: string;
  [key: string]: unknown;
}

/** `X-Docker-Container-Path-Stat` header of `HEAD/GET /containers/{id}/archive`. */
export interface PathStat {
  name: string;
  size: number;
  mode: number;
  mtime: string;
  linkTarget: string;
}
