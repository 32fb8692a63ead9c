/**
 * The host-address helper against the real engine: the default bridge (whose IPAM entry may name
 * no gateway) and a user-defined internal network both resolve to an address this host holds,
 * inside the network's subnet, that a host service can bind and a container on the network reaches.
 */
import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createDockerClient } from "../../src/docker/index.ts";
import { recipeTag } from "../../src/runtime/images.ts";
import { sandboxRecipe } from "../../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../../src/sandbox/index.ts";
import { hostAddressOn, hostIpv4Addresses, inSubnet } from "./docker-network.ts";
import { engine } from "./e2b-server/engine.ts";
import { requireImage } from "./prereq.ts";

describe("inSubnet", () => {
  test("reads CIDR bounds exactly", () => {
    expect(inSubnet("172.17.0.1", "172.17.0.0/16")).toBe(true);
    expect(inSubnet("172.17.255.254", "172.17.0.0/16")).toBe(true);
    expect(inSubnet("172.18.0.1", "172.17.0.0/16")).toBe(false);
    expect(inSubnet("10.1.2.3", "10.1.2.0/24")).toBe(true);
    expect(inSubnet("10.1.3.3", "10.1.2.0/24")).toBe(false);
    expect(inSubnet("192.168.5.9", "0.0.0.0/0")).toBe(true);
    expect(inSubnet("10.0.0.5", "10.0.0.5/32")).toBe(true);
    expect(inSubnet("10.0.0.6", "10.0.0.5/32")).toBe(false);
    expect(inSubnet("172.17.0.1", "fd00::/64")).toBe(false);
    expect(inSubnet("not-an-ip", "172.17.0.0/16")).toBe(false);
    expect(inSubnet("172.17.0.256", "172.17.0.0/16")).toBe(false);
  });
});

async function subnetsOf(network: string): Promise<string[]> {
  const info = await engine(`/networks/${encodeURIComponent(network)}`);
  return ((info.body as { IPAM: { Config: { Subnet: string }[] } }).IPAM.Config ?? []).map((c) => c.Subnet);
}

describe("hostAddressOn (real engine)", () => {
  test("the default bridge: an address this host holds inside the bridge subnet, which a bridge container reaches", async () => {
    const image = recipeTag(sandboxRecipe);
    await requireImage(image);
    const address = await hostAddressOn("bridge");
    expect(hostIpv4Addresses().map((a) => a.address)).toContain(address);
    expect((await subnetsOf("bridge")).some((s) => inSubnet(address, s))).toBe(true);
    const server = Bun.listen({ hostname: address, port: 0, socket: { data() {} } });
    const provider = createDockerSandboxProvider({ docker: createDockerClient() });
    const sandbox = await provider.create({ runId: `test-net-${randomUUID().slice(0, 8)}`, image, network: "bridge" });
    try {
      const r = await sandbox.exec({ cmd: ["bash", "-c", `exec 3<>/dev/tcp/${address}/${server.port}`], timeoutMs: 10_000 });
      expect(r.exitCode).toBe(0);
    } finally {
      server.stop(true);
      expect((await sandbox.release()).outcome).toBe("released");
    }
  });

  test("a user-defined internal network: the engine's gateway, held by this host", async () => {
    const name = `humanish-test-net-${randomUUID().slice(0, 8)}`;
    const created = await engine("/networks/create", { method: "POST", body: JSON.stringify({ Name: name, Internal: true, CheckDuplicate: true }) });
    expect(created.status).toBe(201);
    const id = (created.body as { Id: string }).Id;
    try {
      const address = await hostAddressOn(id);
      expect(hostIpv4Addresses().map((a) => a.address)).toContain(address);
      expect((await subnetsOf(id)).some((s) => inSubnet(address, s))).toBe(true);
    } finally {
      expect((await engine(`/networks/${id}`, { method: "DELETE" })).status).toBe(204);
    }
  });

  test("an unknown network: refused naming it", async () => {
    const missing = `humanish-no-such-net-${randomUUID().slice(0, 8)}`;
    await expect(hostAddressOn(missing)).rejects.toThrow(missing);
  });
});
