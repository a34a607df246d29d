/**
 * The irc-gateway's sender: what irkerd did for GitLab (docs/integrations.md#irc-delivery), with
 * irc-framework. Connections are pooled per server (scheme, host, port, password, nick) and
 * channel key, and kept while used, so repeated pushes do not cause join/part spam; idle ones
 * quit after a while.
 * Channels are joined once (with their key); nick targets are not joined. Lines on one
 * connection are paced, and a PING/PONG after the last line confirms the server took them all.
 * Every connection goes through the SSRF guard (port and resolved address) and every step has
 * a time limit.
 */
import net from "net";
import tls from "tls";
import { Client } from "irc-framework";
import NetTransport from "irc-framework/src/transports/net";
import { PermanentError, TransientError } from "../../outbound/errors";
import { checkIrcPort, guardedLookup, isBlockedAddress, SsrfError } from "../../outbound/ssrf-guard";
import { writeInTurns } from "../../outbound/write-in-turns";
import { ATTR } from "../../tracing/attributes";
import { outboundCall } from "../../tracing/outbound-span";
import { serverKey, type IrcTarget } from "./recipients";

export interface IrcSenderOptions {
	nick: string;
	timeoutMs: number;
	/** Pause between two lines on one connection. */
	intervalMs: number;
	allowLocal: boolean;
	/** A connection unused this long quits. */
	idleMs: number;
	/** Connections kept at most (each target's server, nick, password and key is one); default 100. */
	maxConnections?: number;
	log?: (msg: string) => void;
}

/**
 * The longest line a server may send before its newline: 512 bytes of IRC plus IRCv3's 8 KiB of
 * message tags, rounded up. irc-framework keeps everything up to a newline in memory.
 */
const MAX_INCOMING_LINE_BYTES = 16 * 1024;

/**
 * irc-framework's TCP/TLS transport with the guarded DNS lookup (the socket goes where the guard
 * looked), the writes of one turn of the event loop in one syscall, and a bound on what a server
 * may send without a newline: past it the connection ends.
 */
class GuardedTransport extends NetTransport {
	onSocketData(data: Buffer): void {
		super.onSocketData(data);
		if (this.incoming_buffer.length <= MAX_INCOMING_LINE_BYTES) return;
		this.incoming_buffer = Buffer.alloc(0);
		this.debugOut(`a line of over ${MAX_INCOMING_LINE_BYTES} bytes: closing`);
		this.close(true);
	}

	connect(): void {
		const o = this.options;
		const host = String(o.host);
		const port = Number(o.port) || 6667;
		this.disposeSocket();
		this.requested_disconnect = false;
		this.incoming_buffer = Buffer.from("");
		if (!o.encoding || !this.setEncoding(o.encoding)) this.setEncoding("utf8");
		this.state = 1; // connecting
		const lookup = guardedLookup({ allowLocal: !!o.allow_local }) as never;
		const socket = o.tls
			? tls.connect({ host, port, lookup, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: o.rejectUnauthorized !== false })
			: net.connect({ host, port, lookup });
		// Lines are small and a PING follows them: without this, Nagle + delayed ACK add ~40 ms each.
		socket.setNoDelay(true);
		// ...and a send's lines and its PING leave in one write.
		this.socket = writeInTurns(socket);
		this._onSocketCreate(o, socket);
	}
}

function withTimeout<T>(what: string, ms: number, run: (resolve: (v: T) => void, reject: (e: Error) => void) => () => void): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		let cleanup = () => undefined as void;
		const timer = setTimeout(() => {
			cleanup();
			reject(new TransientError(`${what} timed out after ${ms} ms`));
		}, ms);
		cleanup = run(
			v => (clearTimeout(timer), cleanup(), resolve(v)),
			e => (clearTimeout(timer), cleanup(), reject(e)),
		);
	});
}

/** irc-framework's own limit for one message (it splits longer ones). */
const MAX_LINE_BYTES = 350;

const JOIN_ERRORS = new Set([
	"bad_channel_key",
	"channel_is_full",
	"invite_only_channel",
	"banned_from_channel",
	"no_such_channel",
	"too_many_channels",
	"need_registered_nick",
]);

class IrcConnection {
	readonly client = new Client();
	private readonly joined = new Map<string, Promise<void>>();
	private chain: Promise<void> = Promise.resolve();
	private lastLineAt = 0;
	private pings = 0;
	private readonly pending = new Map<string, { target: string; resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
	private idleTimer: NodeJS.Timeout | null = null;
	private sends = 0;
	closed = false;
	readonly ready: Promise<void>;

	constructor(
		readonly key: string,
		private readonly target: IrcTarget,
		private readonly opts: IrcSenderOptions,
		private readonly onClose: (c: IrcConnection) => void,
	) {
		this.client.on("socket close", () => this.markClosed());
		this.listenForConfirmations();
		this.ready = this.register();
		this.ready.catch(() => this.close());
	}

	private register(): Promise<void> {
		const t = this.target;
		const nick = t.nick ?? this.opts.nick;
		return withTimeout<void>(`IRC connect to ${t.host}:${t.port}`, this.opts.timeoutMs, (resolve, reject) => {
			let attempts = 0;
			const onRegistered = () => resolve();
			const onClose = (err?: Error) => {
				const cause = (err as { message?: string } | undefined)?.message ?? "connection closed";
				reject(
					err instanceof SsrfError || (err as { code?: string })?.code === "SSRF_BLOCKED"
						? new PermanentError(cause)
						: new TransientError(`IRC ${t.host}:${t.port}: ${cause}`),
				);
			};
			const onNickInUse = () => {
				// irkerd: another nick with a numeric suffix.
				if (++attempts > 5) return reject(new TransientError(`IRC ${t.host}:${t.port}: nick ${nick} in use`));
				this.client.changeNick(`${nick.slice(0, 20)}${Math.floor(Math.random() * 10000)}`);
			};
			const onError = (e: { error?: string; reason?: string }) => {
				if (e.error === "password_mismatch") reject(new PermanentError(`IRC ${t.host}:${t.port}: server password refused`));
				if (e.error === "irc") reject(new TransientError(`IRC ${t.host}:${t.port}: ${e.reason ?? "error"}`));
			};
			this.client.once("registered", onRegistered);
			this.client.once("socket close", onClose);
			this.client.on("nick in use", onNickInUse);
			this.client.on("irc error", onError);
			this.client.connect({
				host: t.host,
				port: t.port,
				tls: t.tls,
				password: t.password,
				nick,
				username: nick,
				gecos: "GitLab",
				auto_reconnect: false,
				transport: GuardedTransport,
				allow_local: this.opts.allowLocal,
				ping_interval: 30,
				ping_timeout: 120,
			});
			return () => {
				this.client.off("registered", onRegistered);
				this.client.off("socket close", onClose);
				this.client.off("nick in use", onNickInUse);
				this.client.off("irc error", onError);
			};
		});
	}

	private join(target: IrcTarget): Promise<void> {
		const channel = target.target.toLowerCase();
		let joined = this.joined.get(channel);
		if (!joined) {
			joined = withTimeout<void>(`IRC join ${target.target}`, this.opts.timeoutMs, (resolve, reject) => {
				const onJoin = (e: { nick: string; channel: string }) => {
					if (e.nick === this.client.user.nick && e.channel.toLowerCase() === channel) resolve();
				};
				const onError = (e: { error: string; channel?: string; reason?: string }) => {
					if (JOIN_ERRORS.has(e.error) && (!e.channel || e.channel.toLowerCase() === channel))
						reject(new PermanentError(`IRC join ${target.target}: ${e.reason ?? e.error}`));
				};
				this.client.on("join", onJoin);
				this.client.on("irc error", onError);
				this.client.join(target.target, target.key);
				return () => {
					this.client.off("join", onJoin);
					this.client.off("irc error", onError);
				};
			});
			this.joined.set(channel, joined);
			joined.catch(() => this.joined.delete(channel));
		}
		return joined;
	}

	private async pace(): Promise<void> {
		const wait = this.lastLineAt + this.opts.intervalMs - Date.now();
		if (wait > 0) await new Promise(r => setTimeout(r, wait));
		this.lastLineAt = Date.now();
	}

	/**
	 * Sends the lines in order; resolves when the server has answered a PING sent after them.
	 * Sends are pipelined: the next one's lines go out (paced) while this one's confirmation is
	 * still on its way, since the server answers in order. Pending confirmations are bounded by
	 * the sends in flight (the worker's PUSH_MAX_IN_FLIGHT).
	 */
	send(target: IrcTarget, lines: string[]): Promise<void> {
		this.sends++;
		const written = this.chain.then(() => this.write(target, lines));
		this.chain = written.then(
			() => undefined,
			() => undefined,
		);
		return written.then(w => w.confirmed).finally(() => this.sends--);
	}

	/** Whether a send is under way on it. */
	get busy(): boolean {
		return this.sends > 0;
	}

	/** Joins if needed, writes the lines and a PING; `confirmed` settles with the PONG (or an error for the target). */
	private async write(target: IrcTarget, lines: string[]): Promise<{ confirmed: Promise<void> }> {
		this.touch();
		await this.ready;
		if (!target.isNick) await this.join(target);
		for (const line of lines) {
			if (this.closed) throw new TransientError(`IRC ${target.host}:${target.port}: connection lost`);
			await this.pace();
			// A short single line is sent as is: irc-framework's say() would split it by graphemes first (costly, and a no-op here).
			if (line && Buffer.byteLength(line) <= MAX_LINE_BYTES && !/[\r\n]/.test(line)) this.client.raw("PRIVMSG", target.target, line);
			else this.client.say(target.target, line);
		}
		if (this.closed) throw new TransientError(`IRC ${target.host}:${target.port}: connection lost`);
		const token = `gl${(++this.pings).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
		const confirmed = new Promise<void>((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(token);
				reject(new TransientError(`IRC confirmation from ${target.host} timed out after ${this.opts.timeoutMs} ms`));
			}, this.opts.timeoutMs);
			this.pending.set(token, { target: target.target.toLowerCase(), resolve, reject, timer });
		});
		this.client.ping(token);
		return { confirmed: confirmed.finally(() => this.touch()) };
	}

	/** One handler for every pending confirmation (no listener per send). */
	private listenForConfirmations(): void {
		const settle = (token: string, err?: Error) => {
			const p = this.pending.get(token);
			if (!p) return;
			this.pending.delete(token);
			clearTimeout(p.timer);
			if (err) p.reject(err);
			else p.resolve();
		};
		this.client.on("pong", (e: { message?: string }) => e.message && settle(e.message));
		this.client.on("irc error", (e: { error: string; channel?: string; nick?: string; reason?: string }) => {
			if (e.error !== "cannot_send_to_channel" && e.error !== "no_such_nick") return;
			const name = (e.channel ?? e.nick ?? "").toLowerCase();
			// The server answers in order: the error belongs to the oldest send to that target still waiting.
			for (const [token, p] of this.pending)
				if (p.target === name) return settle(token, new PermanentError(`IRC ${e.channel ?? e.nick}: ${e.reason ?? e.error}`));
		});
		this.client.on("socket close", () => {
			for (const token of [...this.pending.keys()]) settle(token, new TransientError(`IRC ${this.target.host}:${this.target.port}: connection lost`));
		});
	}

	private touch(): void {
		if (this.idleTimer) clearTimeout(this.idleTimer);
		this.idleTimer = setTimeout(() => this.close(), this.opts.idleMs);
		this.idleTimer.unref();
	}

	private markClosed(): void {
		if (this.closed) return;
		this.closed = true;
		if (this.idleTimer) clearTimeout(this.idleTimer);
		this.onClose(this);
	}

	close(): void {
		if (!this.closed && this.client.connection?.connected) this.client.quit("bye");
		this.client.connection?.transport?.disposeSocket();
		this.markClosed();
	}
}

const DEFAULT_MAX_CONNECTIONS = 100;

export class IrcPool {
	private readonly connections = new Map<string, IrcConnection>();

	constructor(private readonly opts: IrcSenderOptions) {}

	/** Sends `lines` to one target, on a pooled connection to its server, in a span (lib/tracing/outbound-span.ts; never a key or password). */
	send(target: IrcTarget, lines: string[]): Promise<void> {
		const attributes = {
			[ATTR.serverAddress]: target.host,
			[ATTR.serverPort]: target.port,
			[ATTR.ircTarget]: target.target,
			[ATTR.ircLines]: lines.length,
		};
		return outboundCall("IRC send", attributes, () => this.sendPooled(target, lines));
	}

	private async sendPooled(target: IrcTarget, lines: string[]): Promise<void> {
		try {
			checkIrcPort(target.port, this.opts);
		} catch (err) {
			throw new PermanentError((err as Error).message);
		}
		// An IP address never reaches the socket's `lookup`: check it here.
		if (net.isIP(target.host) && !this.opts.allowLocal && isBlockedAddress(target.host))
			throw new PermanentError(`requests to the local network are not allowed (${target.host})`);
		const key = serverKey(target);
		let conn = this.connections.get(key);
		if (!conn || conn.closed) {
			this.makeRoom();
			conn = new IrcConnection(key, target, this.opts, c => this.connections.get(c.key) === c && this.connections.delete(c.key));
		}
		// Kept in the order of use: the first is the one unused the longest.
		this.connections.delete(key);
		this.connections.set(key, conn);
		await conn.send(target, lines);
	}

	/** At the bound, the connection unused the longest that has no send under way quits; if all are busy, the send waits for a retry. */
	private makeRoom(): void {
		if (this.connections.size < (this.opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS)) return;
		for (const c of this.connections.values())
			if (!c.busy) {
				c.close();
				return;
			}
		throw new TransientError(`IRC: ${this.connections.size} connections, all sending`);
	}

	get size(): number {
		return this.connections.size;
	}

	close(): Promise<void> {
		for (const c of [...this.connections.values()]) c.close();
		this.connections.clear();
		return Promise.resolve();
	}
}
