/**
 * SSRF guard for every outbound connection an integration makes (docs/architecture.md#workers,
 * docs/integrations.md#outbound-requests): a host is resolved once, every address it resolves to must be public
 * (no loopback, private, link-local, CGNAT, ULA, multicast, unspecified, nor IPv4 hidden in
 * IPv6 forms), and the connection then goes to the address that was checked, so a second DNS
 * answer cannot swap in an internal one. `allowLocal` (ALLOW_LOCAL_REQUESTS) turns it off.
 */
import dns from "dns";
import net from "net";

export class SsrfError extends Error {
	readonly code = "SSRF_BLOCKED";
	constructor(message: string) {
		super(message);
		this.name = "SsrfError";
	}
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
	["0.0.0.0", 8], // "this network", includes 0.0.0.0
	["10.0.0.0", 8],
	["100.64.0.0", 10], // carrier-grade NAT
	["127.0.0.0", 8],
	["169.254.0.0", 16], // link-local, cloud metadata
	["172.16.0.0", 12],
	["192.0.0.0", 24], // IETF protocol assignments
	["192.0.2.0", 24], // documentation
	["192.168.0.0", 16],
	["198.18.0.0", 15], // benchmarking
	["198.51.100.0", 24],
	["203.0.113.0", 24],
	["224.0.0.0", 4], // multicast
	["240.0.0.0", 4], // reserved and broadcast
] as const)
	blocked.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [
	["::", 128], // unspecified
	["::1", 128], // loopback
	["fc00::", 7], // unique local
	["fe80::", 10], // link-local
	["fec0::", 10], // site-local (deprecated)
	["ff00::", 8], // multicast
	["2001:db8::", 32], // documentation
	["100::", 64], // discard-only
	// IPv4 reached through a translator or tunnel whose embedded address cannot be judged from
	// here: local-use NAT64 (the v4 address sits at a prefix-dependent place) and Teredo.
	["64:ff9b:1::", 48],
	["2001::", 32],
] as const)
	blocked.addSubnet(prefix, bits, "ipv6");

/** The 16 bytes of an IPv6 address (handles `::` and an embedded dotted quad). */
function ipv6Bytes(ip: string): number[] | null {
	let text = ip.replace(/%.*$/, "");
	const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
	if (v4) {
		const parts = v4[1].split(".").map(Number);
		text = text.slice(0, -v4[1].length) + `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
	}
	const [head, tail, extra] = text.split("::");
	if (extra !== undefined) return null;
	const h = head ? head.split(":") : [];
	const t = tail !== undefined && tail ? tail.split(":") : [];
	const fill = tail === undefined ? 0 : 8 - h.length - t.length;
	if (fill < 0) return null;
	const groups = [...h, ...Array<string>(fill).fill("0"), ...t];
	if (groups.length !== 8) return null;
	const bytes: number[] = [];
	for (const g of groups) {
		const n = parseInt(g, 16);
		if (!/^[0-9a-f]{1,4}$/i.test(g) || Number.isNaN(n)) return null;
		bytes.push(n >> 8, n & 0xff);
	}
	return bytes;
}

/** IPv4 carried inside an IPv6 address: mapped, SIIT-translated, compatible, well-known NAT64 and 6to4 forms. */
function embeddedIPv4(ip: string): string | null {
	const b = ipv6Bytes(ip);
	if (!b) return null;
	const quad = (o: number) => `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
	const zero = (from: number, to: number) => b.slice(from, to).every(x => x === 0);
	if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return quad(12); // ::ffff:a.b.c.d
	if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return quad(12); // ::ffff:0:a.b.c.d (SIIT)
	if (zero(0, 12) && !zero(12, 16)) return quad(12); // ::a.b.c.d (deprecated compatible)
	if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return quad(12); // 64:ff9b::/96
	if (b[0] === 0x20 && b[1] === 0x02) return quad(2); // 2002:a.b.c.d::/16
	return null;
}

/** True when the address is not a public unicast address. Anything that is not an IP is blocked. */
export function isBlockedAddress(ip: string): boolean {
	const family = net.isIP(ip);
	if (family === 4) return blocked.check(ip, "ipv4");
	if (family !== 6) return true;
	const v4 = embeddedIPv4(ip);
	if (v4 && blocked.check(v4, "ipv4")) return true;
	return blocked.check(ip.replace(/%.*$/, ""), "ipv6");
}

export interface GuardOptions {
	allowLocal: boolean;
	/** For tests: another resolver. */
	lookup?: (host: string) => Promise<dns.LookupAddress[]>;
}

const systemLookup = (host: string) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * Resolves a host and checks every address. Returns the addresses to connect to (never a
 * blocked one). Throws SsrfError when the host is internal, or resolves to nothing.
 */
export async function resolveSafe(host: string, opts: GuardOptions): Promise<dns.LookupAddress[]> {
	const bare = host.replace(/^\[(.*)\]$/, "$1");
	if (!bare) throw new SsrfError("empty host");
	const literal = net.isIP(bare);
	let addresses: dns.LookupAddress[];
	if (literal) addresses = [{ address: bare, family: literal }];
	else {
		try {
			addresses = await (opts.lookup ?? systemLookup)(bare);
		} catch (err) {
			throw new SsrfError(`cannot resolve ${bare}: ${(err as Error).message}`);
		}
	}
	if (!addresses.length) throw new SsrfError(`cannot resolve ${bare}`);
	if (opts.allowLocal) return addresses;
	const bad = addresses.find(a => isBlockedAddress(a.address));
	// Any internal answer blocks the host: a name that mixes public and private addresses is refused.
	if (bad) throw new SsrfError(`requests to the local network are not allowed (${bare} resolves to ${bad.address})`);
	return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls/http that resolves through the guard, so the socket connects to
 * exactly the address that was checked (DNS rebinding cannot slip in between). Node never calls
 * `lookup` for a host that is already an IP address: callers check those with
 * `isBlockedAddress` first.
 */
export function guardedLookup(opts: GuardOptions) {
	return (hostname: string, options: dns.LookupOptions | number | LookupCallback, callback?: LookupCallback) => {
		const cb = (typeof options === "function" ? options : callback) as LookupCallback;
		const o = typeof options === "object" ? options : {};
		resolveSafe(hostname, opts).then(
			list => {
				const wanted = o.family === 4 || o.family === 6 ? list.filter(a => a.family === o.family) : list;
				if (!wanted.length) return cb(Object.assign(new SsrfError(`no IPv${o.family} address for ${hostname}`), { code: "ENOTFOUND" }), "");
				if (o.all) cb(null, wanted);
				else cb(null, wanted[0].address, wanted[0].family);
			},
			(err: NodeJS.ErrnoException) => cb(err, ""),
		);
	};
}

/** The IRC ports the guard lets through (irkerd's usual ones), unless local requests are allowed. */
const IRC_PORTS = new Set([6660, 6661, 6662, 6663, 6664, 6665, 6666, 6667, 6668, 6669, 6697, 7000]);

export function checkIrcPort(port: number, opts: Pick<GuardOptions, "allowLocal">): void {
	if (!opts.allowLocal && !IRC_PORTS.has(port)) throw new SsrfError(`IRC port ${port} is not allowed`);
}
