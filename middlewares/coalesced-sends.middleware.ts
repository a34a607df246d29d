/**
 * What a node sends while one turn of the event loop runs is handed to the transporter at the
 * turn's end (setImmediate), in its order, so that NATS's client writes it in one socket write:
 * the gateway takes each request on a connection of its own, and without this each call it makes
 * is a write of its own that NATS, `events` and the push consumers then handle alone
 * (docs/architecture.md#coalesced-sends).
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
