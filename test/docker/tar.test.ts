import { describe, expect, test } from "bun:test";
import { tarPack, tarUnpack } from "../../src/docker/index.ts";

describe("ustar writer/reader", () => {
  test("round trip of files and directories, binary data, modes and mtimes", () => {
    const bin = new Uint8Array(1500);
    for (let i = 0; i < bin.length; i++) bin[i] = (i * 7) % 256;
    const tar = tarPack([
      { path: "dir", type: "directory" },
      { path: "dir/a.txt", data: "café\n", mode: 0o600, mtime: 1_700_000_000 },
      { path: "bin", data: bin, mode: 0o755 },
      { path: "empty", data: "" },
    ]);
    expect(tar.length % 512).toBe(0);
    const e = tarUnpack(tar);
    expect(e.map((x) => [x.path, x.type, x.mode])).toEqual([
      ["dir/", "directory", 0o755],
      ["dir/a.txt", "file", 0o600],
      ["bin", "file", 0o755],
      ["empty", "file", 0o644],
    ]);
    expect(new TextDecoder().decode(e[1]!.data)).toBe("café\n");
    expect(e[1]!.mtime).toBe(1_700_000_000);
    expect(e[2]!.data).toEqual(bin);
    expect(e[3]!.size).toBe(0);
  });

  test("long paths use the ustar prefix, and beyond that a PAX record", () => {
    const mid = `${"d".repeat(120)}/${"f".repeat(90)}`;
    const long = `${"x".repeat(200)}/${"y".repeat(150)}`;
    const e = tarUnpack(
      tarPack([
        { path: mid, data: "1" },
        { path: long, data: "2" },
      ]),
    );
    expect(e.map((x) => x.path)).toEqual([mid, long]);
  });

  test("system tar reads what we write, and we read what system tar writes", async () => {
    const dir = `/tmp/humanish-tar-test-${process.pid}`;
    await Bun.$`rm -rf ${dir} && mkdir -p ${dir}/in/sub`;
    await Bun.write(`${dir}/ours.tar`, tarPack([{ path: "sub/x.json", data: '{"a":1}', mode: 0o640 }]));
    const listing = await Bun.$`tar -tvf ${dir}/ours.tar`.text();
    expect(listing).toContain("sub/x.json");
    expect(listing).toContain("-rw-r-----");
    await Bun.write(`${dir}/in/sub/${"n".repeat(120)}.txt`, "long name\n");
    await Bun.$`tar --format=gnu -C ${dir}/in -cf ${dir}/gnu.tar sub && tar --format=pax -C ${dir}/in -cf ${dir}/pax.tar sub`;
    for (const f of ["gnu.tar", "pax.tar"]) {
      const e = tarUnpack(new Uint8Array(await Bun.file(`${dir}/${f}`).arrayBuffer()));
      const file = e.find((x) => x.type === "file")!;
      expect(file.path).toBe(`sub/${"n".repeat(120)}.txt`);
      expect(new TextDecoder().decode(file.data)).toBe("long name\n");
    }
    await Bun.$`rm -rf ${dir}`;
  });

  test("corrupt checksum, truncation and unsafe paths are rejected; size bound enforced", () => {
    const tar = tarPack([{ path: "a", data: "hello" }]);
    const bad = tar.slice();
    bad[0] = 0x62;
    expect(() => tarUnpack(bad)).toThrow(/checksum/);
    expect(() => tarUnpack(tar.slice(0, 512 + 2))).toThrow(/truncated/);
    expect(() => tarUnpack(tar.slice(0, 1024))).toThrow(/end-of-archive/);
    expect(() => tarPack([{ path: "/etc/passwd", data: "x" }])).toThrow(/relative/);
    expect(() => tarPack([{ path: "a/../../b", data: "x" }])).toThrow(/relative/);
    expect(() => tarUnpack(tar, { maxFileBytes: 4 })).toThrow(/over the 4-byte bound/);
  });
});
