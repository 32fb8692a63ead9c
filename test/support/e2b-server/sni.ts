/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends, so the
 * egress proxy can route a connection before any TLS is spoken. Pure: no I/O.
 *
 * Layout read (RFC 8446 / 6066): record header (type 22, version, length), handshake header
 * (type 1, 3-byte length), client version, 32-byte random, session id, cipher suites, compression
 * methods, then extensions; extension 0 (`server_name`) holds a list whose host-name entry (type 0)
 * is the name. A ClientHello split over several TLS records is not reassembled (clients send one).
 */

/** `{ host }` (lowercased; `host` is undefined when the hello carries no SNI), `incomplete` (read more), or `invalid`. */
export type SniResult = { host: string | undefined } | "incomplete" | "invalid";

/** Parses the ClientHello at the start of `bytes`. */
export function sniOf(bytes: Uint8Array): SniResult {
  if (bytes.length < 5) return "incomplete";
  if (bytes[0] !== 22) return "invalid";
  const recordLength = ((bytes[3] ?? 0) << 8) | (bytes[4] ?? 0);
  if (bytes.length < 5 + recordLength) return "incomplete";
  const hello = bytes.subarray(5, 5 + recordLength);
  let at = 0;
  const u8 = () => {
    if (at + 1 > hello.length) throw new RangeError("short");
    return hello[at++] as number;
  };
  const u16 = () => (u8() << 8) | u8();
  const skip = (n: number) => {
    if (at + n > hello.length) throw new RangeError("short");
    at += n;
  };
  try {
    if (u8() !== 1) return "invalid";
    skip(3); // handshake length
    skip(2 + 32); // client version, random
    skip(u8()); // session id
    skip(u16()); // cipher suites
    skip(u8()); // compression methods
    if (at === hello.length) return { host: undefined };
    const extensionsEnd = at + 2 + u16();
    while (at + 4 <= Math.min(extensionsEnd, hello.length)) {
      const type = u16();
      const length = u16();
      if (type !== 0) {
        skip(length);
        continue;
      }
      const listEnd = at + 2 + u16();
      while (at + 3 <= listEnd) {
        const nameType = u8();
        const nameLength = u16();
        if (nameType === 0) {
          skip(nameLength);
          return { host: new TextDecoder().decode(hello.subarray(at - nameLength, at)).toLowerCase() };
        }
        skip(nameLength);
      }
      return { host: undefined };
    }
    return { host: undefined };
  } catch {
    return "invalid";
  }
}
