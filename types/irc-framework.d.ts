// irc-framework 4.14.0 ships no types; the subset lib/integrations/irc-gateway/sender.ts uses.
declare module "irc-framework" {
	import { EventEmitter } from "events";

	export class Client extends EventEmitter {
		constructor(options?: Record<string, unknown>);
		user: { nick: string };
		connection: { connected: boolean; end(data?: string): void; transport?: { disposeSocket(): void } };
		connect(options: Record<string, unknown>): void;
		join(channel: string, key?: string): void;
		say(target: string, message: string): void;
		raw(...args: string[]): void;
		ping(message?: string): void;
		changeNick(nick: string): void;
		quit(message?: string): void;
		removeAllListeners(event?: string): this;
	}
}

declare module "irc-framework/src/transports/net" {
	import { EventEmitter } from "events";

	class NetTransport extends EventEmitter {
		constructor(options: Record<string, unknown>);
		/** The client's connection options (irc-framework passes them through as given). */
		options: {
			host?: string;
			port?: number | string;
			tls?: boolean;
			rejectUnauthorized?: boolean;
			encoding?: string;
			[option: string]: unknown;
		};
		socket: import("net").Socket | null;
		state: number;
		requested_disconnect: boolean;
		incoming_buffer: Buffer;
		debugOut(out: string): void;
		disposeSocket(): void;
		setEncoding(encoding: string): boolean;
		_onSocketCreate(options: Record<string, unknown>, socket: import("net").Socket): void;
		onSocketData(data: Buffer): void;
		close(force?: boolean): void;
		connect(): void;
	}
	export = NetTransport;
}
