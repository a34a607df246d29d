import http from "http";
import type { AddressInfo } from "net";
import { checkIrcPort, guardedLookup, isBlockedAddress, resolveSafe, SsrfError } from "../../../../lib/outbound/ssrf-guard";

const lookupOf = (table: Record<string, string[]>) => (host: string) => {
	const list = table[host];
	if (!list) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" }));
	return Promise.resolve(list.map(address => ({ address, family: address.includes(":") ? 6 : 4 })));
};

describe("SSRF guard", () => {
	it("blocks loopback, private, link-local, CGNAT, ULA, multicast and unspecified addresses", () => {
		for (const ip of [
			"127.0.0.1",
			"127.9.9.9",
			"0.0.0.0",
			"10.1.2.3",
			"172.16.0.1",
			"172.31.255.255",
			"192.168.1.1",
			"169.254.169.254",
			"100.64.0.1",
			"224.0.0.1",
			"255.255.255.255",
			"::1",
			"::",
			"fc00::1",
			"fd12:3456::1",
			"fe80::1",
			"fe80::1%eth0",
			"ff02::1",
		])
			expect({ ip, blocked: isBlockedAddress(ip) }).toEqual({ ip, blocked: true });
	});

	it("blocks IPv4 hidden in IPv6 forms (mapped, compatible, NAT64, 6to4)", () => {
		const mapped = ["::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "0:0:0:0:0:ffff:a9fe:a9fe"];
		const hidden = [...mapped, "::127.0.0.1", "64:ff9b::a00:1", "2002:c0a8:101::1"];
		for (const ip of hidden) expect({ ip, blocked: isBlockedAddress(ip) }).toEqual({ ip, blocked: true });
	});

	it("judges the IPv4 inside SIIT addresses, and refuses local-use NAT64 and Teredo outright", () => {
		for (const ip of [
			"::ffff:0:a9fe:a9fe", // SIIT: 169.254.169.254, the cloud metadata address
			"::ffff:0:169.254.169.254",
			"0:0:0:0:ffff:0:a00:1",
			"64:ff9b::169.254.169.254", // well-known NAT64
			"64:ff9b:1::a9fe:a9fe", // local-use NAT64 (RFC 8215)
			"64:ff9b:1:a9fe:a9:fe00::",
			"2002:a9fe:a9fe::1", // 6to4
			"2001:0:4136:e378:8000:63bf:5601:5601", // Teredo
			"2001::1",
		])
			expect({ ip, blocked: isBlockedAddress(ip) }).toEqual({ ip, blocked: true });
		expect(isBlockedAddress("::ffff:0:808:808")).toBe(false);
		expect(isBlockedAddress("64:ff9b::8.8.8.8")).toBe(false);
	});

	it("lets public addresses through", () => {
		for (const ip of [
			"8.8.8.8",
			"93.184.216.34",
			"172.32.0.1",
			"100.128.0.1",
			"2606:4700:4700::1111",
			"::ffff:8.8.8.8",
			"2002:0808:0808::1",
			"2001:4860::8888",
		])
			expect({ ip, blocked: isBlockedAddress(ip) }).toEqual({ ip, blocked: false });
		expect(isBlockedAddress("not-an-ip")).toBe(true);
	});

	it("refuses a DNS name when any address it resolves to is internal", async () => {
		const lookup = lookupOf({ "public.test": ["93.184.216.34"], "rebind.test": ["93.184.216.34", "10.0.0.5"], "mapped.test": ["::ffff:127.0.0.1"] });
		await expect(resolveSafe("public.test", { allowLocal: false, lookup })).resolves.toEqual([{ address: "93.184.216.34", family: 4 }]);
		await expect(resolveSafe("rebind.test", { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
		await expect(resolveSafe("mapped.test", { allowLocal: false, lookup })).rejects.toThrow(/local network/);
		await expect(resolveSafe("missing.test", { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
		await expect(resolveSafe("[::1]", { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
		await expect(resolveSafe("rebind.test", { allowLocal: true, lookup })).resolves.toHaveLength(2);
	});

	it("resolves real names through the system resolver (localhost is loopback)", async () => {
		await expect(resolveSafe("localhost", { allowLocal: false })).rejects.toThrow(SsrfError);
		await expect(resolveSafe("127.1", { allowLocal: false })).rejects.toThrow(SsrfError);
	});

	it("refuses a URL's host however the URL spells a local address", async () => {
		const lookup = lookupOf({ "ok.test": ["93.184.216.34"] });
		const hostOf = (url: string) => new URL(url).hostname;
		await expect(resolveSafe(hostOf("https://ok.test/api"), { allowLocal: false, lookup })).resolves.toEqual([
			expect.objectContaining({ address: "93.184.216.34" }),
		]);
		await expect(resolveSafe(hostOf("http://2130706433/"), { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
		await expect(resolveSafe(hostOf("http://0x7f.1/"), { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
		await expect(resolveSafe(hostOf("http://[::ffff:127.0.0.1]/"), { allowLocal: false, lookup })).rejects.toThrow(SsrfError);
	});

	it("limits IRC ports unless local requests are allowed", () => {
		expect(() => checkIrcPort(6667, { allowLocal: false })).not.toThrow();
		expect(() => checkIrcPort(6697, { allowLocal: false })).not.toThrow();
		expect(() => checkIrcPort(22, { allowLocal: false })).toThrow(SsrfError);
		expect(() => checkIrcPort(22, { allowLocal: true })).not.toThrow();
	});

	it("makes a real HTTP request fail before connecting to loopback, and pass when allowed", async () => {
		let hits = 0;
		const server = http.createServer((_req, res) => (hits++, res.end("ok")));
		await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
		const port = (server.address() as AddressInfo).port;
		const get = (allowLocal: boolean) =>
			new Promise<string>((resolve, reject) => {
				const req = http.get({ host: "localhost", port, path: "/", lookup: guardedLookup({ allowLocal }) }, res => {
					let body = "";
					res.on("data", c => (body += c));
					res.on("end", () => resolve(body));
				});
				req.on("error", reject);
			});
		try {
			await expect(get(false)).rejects.toThrow(SsrfError);
			expect(hits).toBe(0);
			await expect(get(true)).resolves.toBe("ok");
			expect(hits).toBe(1);
		} finally {
			await new Promise(r => server.close(r));
		}
	});
});
