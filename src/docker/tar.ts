/**
 * A minimal POSIX ustar writer and reader (with PAX/GNU long-name support on read, PAX on write),
 * used for build contexts and the container archive endpoints (`PUT/GET /containers/{id}/archive`).
 *
 * Layout per entry: a 512-byte header (name[100] mode[8] uid[8] gid[8] size[12] mtime[12] chksum[8]
 * typeflag[1] linkname[100] "ustar\0" "00" uname[32] gname[32] devmajor[8] devminor[8] prefix[155]),
 * then the data padded to 512 bytes; the archive ends with two zero blocks.
 */

import { concatBytes } from "../bytes/concat.ts";
import { HumanishError } from "../errors.ts";

const BLOCK = 512;
const enc = new TextEncoder();

/** One entry to write. `mode` defaults to 0o644 (files) / 0o755 (directories); `mtime` is seconds. */
export interface TarEntryInput {
  path: string;
  data?: Uint8Array | string;
  type?: "file" | "directory";
  mode?: number;
  uid?: number;
  gid?: number;
  mtime?: number;
}

/** One entry read back. `data` is empty for non-files. */
export interface TarEntry {
  path: string;
  type: "file" | "directory" | "symlink" | "hardlink" | "other";
  mode: number;
  size: number;
  uid: number;
  gid: number;
  mtime: number;
  linkName: string;
  data: Uint8Array;
}

function tarInvalid(what: string): HumanishError {
  return new HumanishError("HUMANISH_TAR_INVALID", `Malformed tar archive: ${what}`, {
    next: "the archive came from the Docker engine or a recipe; check the engine version and the file",
  });
}

function writeString(h: Uint8Array, off: number, len: number, bytes: Uint8Array): void {
  if (bytes.length > len) throw tarInvalid(`field of ${bytes.length} bytes exceeds ${len}`);
  h.set(bytes, off);
}

function writeOctal(h: Uint8Array, off: number, len: number, value: number): void {
  // len-1 octal digits then NUL.
  const digits = Math.floor(value).toString(8);
  if (digits.length > len - 1) throw tarInvalid(`number ${value} does not fit a ${len}-byte field`);
  writeString(h, off, len, enc.encode(`${digits.padStart(len - 1, "0")}\0`));
}

function paxRecord(key: string, value: string): Uint8Array {
  const body = ` ${key}=${value}\n`;
  const bodyLen = enc.encode(body).length;
  let len = bodyLen + 1;
  while (String(len).length + bodyLen !== len) len = String(len).length + bodyLen;
  return enc.encode(`${len}${body}`);
}

function header(name: Uint8Array, prefix: Uint8Array, e: { mode: number; uid: number; gid: number; size: number; mtime: number; flag: string }): Uint8Array {
  const h = new Uint8Array(BLOCK);
  writeString(h, 0, 100, name);
  writeOctal(h, 100, 8, e.mode & 0o7777);
  writeOctal(h, 108, 8, e.uid);
  writeOctal(h, 116, 8, e.gid);
  writeOctal(h, 124, 12, e.size);
  writeOctal(h, 136, 12, e.mtime);
  h[156] = e.flag.charCodeAt(0);
  writeString(h, 257, 6, enc.encode("ustar\0"));
  writeString(h, 263, 2, enc.encode("00"));
  writeString(h, 345, 155, prefix);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  writeString(h, 148, 8, enc.encode(`${sum.toString(8).padStart(6, "0")}\0 `));
  return h;
}

function splitName(path: string): { name: Uint8Array; prefix: Uint8Array } | undefined {
  const all = enc.encode(path);
  if (all.length <= 100) return { name: all, prefix: new Uint8Array(0) };
  for (let i = path.length - 1; i > 0; i--) {
    if (path[i] !== "/") continue;
    const prefix = enc.encode(path.slice(0, i));
    const name = enc.encode(path.slice(i + 1));
    if (prefix.length <= 155 && name.length <= 100 && name.length > 0) return { name, prefix };
  }
  return undefined;
}

function padding(size: number): Uint8Array {
  const rem = size % BLOCK;
  return new Uint8Array(rem === 0 ? 0 : BLOCK - rem);
}

/**
 * Writes a tar archive of the given entries (in order). Paths are relative (no leading `/`);
 * directories get a trailing `/`. Paths too long for ustar use a PAX `path` record.
 * Throws `HUMANISH_TAR_INVALID` on an empty, absolute or `..` path.
 */
export function tarPack(entries: readonly TarEntryInput[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const type = e.type ?? "file";
    if (!e.path || e.path.startsWith("/") || e.path.split("/").includes(".."))
      throw tarInvalid(`entry path ${JSON.stringify(e.path)} must be relative without ..`);
    const data = type === "file" ? (typeof e.data === "string" ? enc.encode(e.data) : (e.data ?? new Uint8Array(0))) : new Uint8Array(0);
    const path = type === "directory" && !e.path.endsWith("/") ? `${e.path}/` : e.path;
    const meta = {
      mode: e.mode ?? (type === "directory" ? 0o755 : 0o644),
      uid: e.uid ?? 0,
      gid: e.gid ?? 0,
      size: data.length,
      mtime: e.mtime ?? 0,
      flag: type === "directory" ? "5" : "0",
    };
    let split = splitName(path);
    if (!split) {
      const pax = paxRecord("path", path);
      parts.push(header(enc.encode("PaxHeader"), new Uint8Array(0), { ...meta, size: pax.length, flag: "x", mode: 0o644 }), pax, padding(pax.length));
      split = { name: enc.encode(path.slice(-100).replace(/^[^/]*\//, "")).slice(0, 100), prefix: new Uint8Array(0) };
    }
    parts.push(header(split.name, split.prefix, meta), data, padding(data.length));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return concatBytes(parts);
}

const dec = new TextDecoder();

function readString(h: Uint8Array, off: number, len: number): string {
  const f = h.subarray(off, off + len);
  const nul = f.indexOf(0);
  return dec.decode(nul === -1 ? f : f.subarray(0, nul));
}

function readNumber(h: Uint8Array, off: number, len: number): number {
  const f = h.subarray(off, off + len);
  if (f[0]! & 0x80) {
    // GNU base-256: big-endian two's complement, first byte's high bit set (positive only here).
    let v = f[0]! & 0x7f;
    for (let i = 1; i < f.length; i++) v = v * 256 + f[i]!;
    return v;
  }
  const s = dec
    .decode(f)
    .replace(/[\0 ]+$/g, "")
    .replace(/^ +/, "");
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s)) throw tarInvalid(`bad octal field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
}

function parsePax(data: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(0x20, at);
    if (sp === -1) throw tarInvalid("bad PAX record");
    const len = parseInt(dec.decode(data.subarray(at, sp)), 10);
    if (!Number.isFinite(len) || len <= 0 || at + len > data.length) throw tarInvalid("bad PAX record length");
    const rec = dec.decode(data.subarray(sp + 1, at + len - 1));
    const eq = rec.indexOf("=");
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    at += len;
  }
  return out;
}

/**
 * Reads every entry of a tar archive. Verifies each header checksum. `maxFileBytes` bounds the size
 * of any single entry (default unbounded). Throws `HUMANISH_TAR_INVALID` on malformed input.
 */
export function tarUnpack(bytes: Uint8Array, opts: { maxFileBytes?: number } = {}): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  while (at + BLOCK <= bytes.length) {
    const h = bytes.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return entries;
    const stored = readNumber(h, 148, 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (sum !== stored) throw tarInvalid(`header checksum mismatch at offset ${at}`);
    const flag = String.fromCharCode(h[156]!);
    const size = pax.size !== undefined ? Number(pax.size) : readNumber(h, 124, 12);
    const dataStart = at + BLOCK;
    if (dataStart + size > bytes.length) throw tarInvalid(`entry at offset ${at} is truncated`);
    const data = bytes.subarray(dataStart, dataStart + size);
    at = dataStart + size + ((BLOCK - (size % BLOCK)) % BLOCK);
    if (flag === "x") {
      pax = parsePax(data);
      continue;
    }
    if (flag === "g") continue;
    if (flag === "L") {
      longName = readString(data, 0, data.length);
      continue;
    }
    if (flag === "K") {
      longLink = readString(data, 0, data.length);
      continue;
    }
    const magic = readString(h, 257, 6);
    const prefix = magic.startsWith("ustar") ? readString(h, 345, 155) : "";
    const base = readString(h, 0, 100);
    const path = pax.path ?? longName ?? (prefix ? `${prefix}/${base}` : base);
    const type: TarEntry["type"] =
      flag === "0" || flag === "\0" || flag === "7" ? "file" : flag === "5" ? "directory" : flag === "2" ? "symlink" : flag === "1" ? "hardlink" : "other";
    if (type === "file" && opts.maxFileBytes !== undefined && size > opts.maxFileBytes) {
      throw new HumanishError("HUMANISH_TAR_ENTRY_TOO_LARGE", `Tar entry ${path} is ${size} bytes, over the ${opts.maxFileBytes}-byte bound`, {
        next: "read a smaller file or raise maxBytes",
      });
    }
    entries.push({
      path,
      type,
      mode: readNumber(h, 100, 8) & 0o7777,
      size,
      uid: readNumber(h, 108, 8),
      gid: readNumber(h, 116, 8),
      mtime: readNumber(h, 136, 12),
      linkName: pax.linkpath ?? longLink ?? readString(h, 157, 100),
      data: type === "file" ? data.slice() : new Uint8Array(0),
    });
    pax = {};
    longName = undefined;
    longLink = undefined;
  }
  throw tarInvalid("archive ends without its end-of-archive blocks");
}
