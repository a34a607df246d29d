/**
 * Line protocols write a message in pieces and then wait for the peer's answer: an SMTP mail's
 * headers, body and final dot; IRC lines and the PING after them. Each piece would be a syscall
 * of its own (and a read for the peer). Here the socket is corked at its first write in a turn
 * of the event loop and uncorked when the turn ends, so the pieces leave in one `writev`.
 */
import type net from "net";

export function writeInTurns<S extends net.Socket>(socket: S): S {
	const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
	let corked = false;
	socket.write = (...args: unknown[]): boolean => {
		if (!corked) {
			corked = true;
			socket.cork();
			setImmediate(() => {
				corked = false;
				socket.uncork();
			});
		}
		return write(...args);
	};
	return socket;
}
