/**
 * Who is on the other end of a request. The direct peer is believed; `X-Forwarded-For` only when
 * that peer is one of TRUSTED_PROXIES (the Ingress), and then, as Rails' trusted proxies do, the
 * client is the right-most address that is not itself a trusted proxy: everything left of it was
 * written by the client and may be made up.
 */
import net from "net";

/** The lists made, by their entries: the same ranges give the same list, so a connection's peer is worked out once for all its readers. */
const lists = new Map<string, net.BlockList>();

/** A block list of `address/bits` entries (config/ validates and normalises them). */
export function trustedProxyList(cidrs: readonly string[]): net.BlockList {
	const key = cidrs.join(" ");
	let list = lists.get(key);
	if (list) return list;
	list = new net.BlockList();
	for (const entry of cidrs) {
		const [address, bits] = entry.split("/");
		const family = net.isIP(address) === 4 ? "ipv4" : "ipv6";
		list.addSubnet(address, Number(bits), family);
	}
	lists.set(key, list);
	return list;
}

/** `::ffff:10.0.0.1` is 10.0.0.1: one client, one spelling. */
export function normalizeAddress(address: string): string {
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
	return mapped ? mapped[1] : address;
}

function isTrusted(address: string, trusted: net.BlockList): boolean {
	const family = net.isIP(address);
	return family !== 0 && trusted.check(address, family === 4 ? "ipv4" : "ipv6");
}

type Req = { headers: Record<string, string | string[] | undefined>; socket?: { remoteAddress?: string } };

interface Peer {
	address: string;
	trusted: boolean;
	list: net.BlockList;
}

/** Worked out once per connection: a keep-alive socket serves many requests from one peer. */
const peers = new WeakMap<object, Peer>();

function peerOf(req: Req, list: net.BlockList): Peer {
	const socket = req.socket;
	let peer = socket ? peers.get(socket) : undefined;
	if (!peer || peer.list !== list) {
		const address = normalizeAddress(socket?.remoteAddress ?? "");
		peer = { address, trusted: isTrusted(address, list), list };
		if (socket) peers.set(socket, peer);
	}
	return peer;
}

/** The direct peer is one of the trusted proxies (its X-Forwarded-* headers may be believed). */
export function peerIsTrusted(req: Req, trusted: net.BlockList): boolean {
	return peerOf(req, trusted).trusted;
}

export function clientAddress(req: Req, trusted: net.BlockList): string {
	const peer = peerOf(req, trusted);
	if (!peer.address) return "unknown";
	if (!peer.trusted) return peer.address;
	const header = req.headers["x-forwarded-for"];
	const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",");
	// Right to left: the last hop was added by our own proxy, the first by whoever connected to it.
	for (let i = hops.length - 1; i >= 0; i--) {
		const hop = normalizeAddress(hops[i].trim());
		if (!net.isIP(hop)) return peer.address; // a malformed hop: nothing left of it can be believed
		if (!isTrusted(hop, trusted)) return hop;
	}
	return peer.address;
}
