/**
 * Packets to the transporter leave together: those sent while one turn of the event loop runs are
 * handed to NATS at its end (setImmediate), in their order, and its client writes them in one
 * socket write. Without this, each request the gateway takes on a connection of its own is a
 * write of its own, and NATS, `events` and the push consumers each handle it alone: about five
 * read and write syscalls more per push across the split deployment (docs/performance.md#coalesced-sends).
 */
import type { Middleware } from "moleculer";

type Send = (topic: string, data: Buffer, meta: unknown) => Promise<void>;

interface Pending {
	topic: string;
	data: Buffer;
	meta: unknown;
	resolve: () => void;
	reject: (err: unknown) => void;
}

export function CoalescedSendsMiddleware(): Middleware {
	return {
		name: "CoalescedSends",
		transporterSend(next: Send): Send {
			let pending: Pending[] = [];
			const sendAll = () => {
				const batch = pending;
				pending = [];
				for (const p of batch) {
					try {
						next(p.topic, p.data, p.meta).then(p.resolve, p.reject);
					} catch (err) {
						p.reject(err);
					}
				}
			};
			return (topic, data, meta) =>
				new Promise<void>((resolve, reject) => {
					if (pending.push({ topic, data, meta, resolve, reject }) === 1) setImmediate(sendAll);
				});
		},
	} as unknown as Middleware;
}
