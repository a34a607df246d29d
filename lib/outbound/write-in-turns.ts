/**
 * Writes gathered per turn of the event loop. A worker's writes come one peer answer (one socket
 * callback) at a time, and line protocols write a message in pieces before they wait for the
 * answer: an SMTP mail's headers, body and final dot; IRC lines and the PING after them. Each
 * write would be a syscall of its own (and a read for the peer); gathered, they leave in one.
 */
import type net from "net";

let turn: Promise<void> | null = null;

/** Resolves when the current turn of the event loop ends, together for every caller of this turn. */
export function nextTurn(): Promise<void> {
	turn ??= new Promise<void>(resolve =>
		setImmediate(() => {
			turn = null;
			resolve();
		}),
	);
	return turn;
}

/** Corks the socket at its first write in a turn and uncorks it when the turn ends: the turn's writes leave in one `writev`. */
export function writeInTurns<S extends net.Socket>(socket: S): S {
	const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
	let corked = false;
	socket.write = (...args: unknown[]): boolean => {
		if (!corked) {
			corked = true;
			socket.cork();
			void nextTurn().then(() => {
				corked = false;
				socket.uncork();
			});
		}
		return write(...args);
	};
	return socket;
}
