/** SHA-256 of bytes or UTF-8 text as 64 lowercase hex digits (what run.json and provenance record). */
import { createHash } from "node:crypto";

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
