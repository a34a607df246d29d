/**
 * IRC recipients of the irc-gateway integration, parsed as GitLab's IrkerService did
 * (docs/integrations.md#irc-recipients), then turned into connection targets the way irkerd reads its URLs
 * (#irc-delivery): `irc[s]://[:password@]host[:port]/channel[?key=secret]`, `,isnick` for a nick,
 * a bare channel joined to `default_irc_uri`.
 */
import { hasControlCharacters } from "../../text/control-characters";

const DEFAULT_IRC_PORT = 6667;
const DEFAULT_IRCS_PORT = 6697;

/** Characters a channel, nick or key may never hold: they would end or split the IRC line. */
const unsafe = (text: string) => /[\s,]/.test(text) || hasControlCharacters(text);

/** GitLab's `consider_uri`: an irc/ircs URI with a host and either a channel path or a fragment. */
function considerUri(raw: string, base?: URL): string | null {
	let uri: URL;
	try {
		uri = base ? new URL(raw, base) : new URL(raw);
	} catch {
		return null;
	}
	if (uri.protocol !== "irc:" && uri.protocol !== "ircs:") return null;
	if (!uri.hostname) return null;
	// irc://host/ alone names no channel; irc://host/#chan keeps the channel in the fragment.
	if (!uri.hash && uri.pathname.length > 1) return uri.toString();
	if (uri.hash.length > 1) return uri.toString();
	return null;
}

/**
 * `recipients` (whitespace-separated) → channel URIs, GitLab's rules: a token is kept as given
 * when it is a full irc(s) URI; it is (also) joined to `default_irc_uri` when one is set. Tokens
 * that make no valid URI are dropped; duplicates are kept once.
 */
export function parseRecipients(recipients: string, defaultIrcUri?: string | null): string[] {
	const tokens = String(recipients ?? "")
		.split(/\s+/)
		.filter(Boolean);
	let base: URL | undefined;
	if (defaultIrcUri && defaultIrcUri.trim()) {
		try {
			base = new URL("/", defaultIrcUri.trim());
		} catch {
			base = undefined;
		}
	}
	const out: string[] = [];
	for (const token of tokens) {
		let uri = considerUri(token);
		if (!uri || base) {
			// URI.join(default_irc_uri, '/', token): an absolute token stays as it is.
			const joined = base ? considerUri(token, base) : null;
			uri = joined ?? (base ? null : uri);
		}
		if (uri && parseTarget(uri) && !out.includes(uri)) out.push(uri);
	}
	return out;
}

export interface IrcTarget {
	/** The URI it came from. */
	uri: string;
	tls: boolean;
	host: string;
	port: number;
	/** Server password (`ircs://:password@host/`). */
	password?: string;
	/** A non-empty URL user name overrides the sender's nick. */
	nick?: string;
	/** `#chan` (a `#` is prepended when the name has no channel prefix) or a nick. */
	target: string;
	isNick: boolean;
	/** Channel key from `?key=`. */
	key?: string;
}

function decode(value: string): string | null {
	try {
		return decodeURIComponent(value);
	} catch {
		return null;
	}
}

/** One channel URI → where to connect and whom to address; null when it cannot be sent to safely. */
export function parseTarget(uri: string): IrcTarget | null {
	let url: URL;
	try {
		url = new URL(uri);
	} catch {
		return null;
	}
	const tls = url.protocol === "ircs:";
	if (!tls && url.protocol !== "irc:") return null;
	const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
	if (!host) return null;
	const port = url.port ? Number(url.port) : tls ? DEFAULT_IRCS_PORT : DEFAULT_IRC_PORT;

	// irkerd reads the channel from the fragment when there is one (`irc://h/#chan`), else the path.
	let spec = url.hash.length > 1 ? url.hash.slice(1) : url.pathname.replace(/^\//, "");
	let query = url.search;
	// `#chan?key=x` puts the key into the fragment; accept it there too.
	const q = spec.indexOf("?");
	if (q >= 0) {
		query = spec.slice(q);
		spec = spec.slice(0, q);
	}
	const name = decode(spec);
	if (!name) return null;
	const key = new URLSearchParams(query).get("key") ?? undefined;

	let target = name;
	let isNick = false;
	if (/,isnick$/i.test(target)) {
		target = target.replace(/,isnick$/i, "");
		isNick = true;
	} else if (!/^[#&+!]/.test(target)) {
		target = `#${target}`;
	}
	if (!target || unsafe(target) || (isNick && /^[#&+!]/.test(target))) return null;
	if (target.length > 200) return null;
	if (key !== undefined && (!key || unsafe(key))) return null;

	const password = url.password ? decode(url.password) : undefined;
	const nick = url.username ? decode(url.username) : undefined;
	if (password === null || nick === null) return null;
	if (password !== undefined && /[\r\n\0]/.test(password)) return null;
	if (nick !== undefined && (unsafe(nick) || /^[#&+!]/.test(nick))) return null;

	return { uri, tls, host, port, password, nick: nick || undefined, target, isNick, key: key || undefined };
}

/**
 * A recipient token without the secrets it carries: a channel key (`?key=…`) and a server password
 * (`irc://:password@host/`), which GET never shows (docs/integrations.md#irc-recipients).
 */
function withoutSecrets(token: string): string {
	const q = token.indexOf("?");
	const head = (q < 0 ? token : token.slice(0, q)).replace(
		/^(ircs?:\/\/)([^/@:]*):[^/@]*@/i,
		(_, scheme: string, user: string) => scheme + (user ? `${user}@` : ""),
	);
	if (q < 0) return head;
	const query = token
		.slice(q + 1)
		.split("&")
		.filter(part => !part.startsWith("key="));
	return query.length ? `${head}?${query.join("&")}` : head;
}

/**
 * The secrets of an IRC address text (`recipients`, `default_irc_uri`): shown without them, and
 * kept when a PUT sends a token back without them (as GET showed it). A token sent with a key or a
 * password of its own takes those; a key can only be dropped with its channel, or by DELETE.
 */
export const IRC_ADDRESS_SECRETS = {
	shown: (text: string): string => text.replace(/\S+/g, withoutSecrets),
	kept(sent: string, stored: string): string {
		const storedTokens = stored.split(/\s+/).filter(Boolean);
		return sent.replace(/\S+/g, token => (withoutSecrets(token) === token ? (storedTokens.find(s => withoutSecrets(s) === token) ?? token) : token));
	},
};

/**
 * The connection a target needs: scheme, host, port, password, nick, and the channel key. A
 * channel joined with its key stays joined on that connection, so a connection that knows a key
 * is never shared with a target that does not give it (another project's push would post into
 * the keyed channel).
 */
export function serverKey(t: Pick<IrcTarget, "tls" | "host" | "port" | "password" | "nick" | "key">): string {
	return JSON.stringify([t.tls ? "ircs" : "irc", t.host.toLowerCase(), t.port, t.password ?? "", t.nick ?? "", t.key ?? ""]);
}

/** A target as logs may show it: no server password, no channel key. */
export function describeTarget(t: Pick<IrcTarget, "tls" | "host" | "port" | "target">): string {
	return `${t.tls ? "ircs" : "irc"}://${t.host}:${t.port}/${t.target}`;
}
