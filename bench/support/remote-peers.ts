/**
 * The push benchmark's side of bench/support/peers-process.ts: starts the peers' process, tells
 * where the peers listen, and fetches what arrived for a run.
 */
import { answers200, freePort, startProcess, stopProcess, type ManagedProcess } from "../../test/support/processes";
import { marker, newRunId, PEER_KINDS, type PeerKind, type Receipts } from "./peers-process";

export { marker, newRunId, PEER_KINDS };
export type { PeerKind };

export interface RemotePeers {
	trackerUrl: string;
	smtpUrl: string;
	ircPort: number;
	ircChannel: string;
	proc: ManagedProcess;
	receipts(run: string): Promise<Receipts>;
	/** Distinct events of the run each kind has seen. */
	counts(run: string): Promise<Record<PeerKind, number>>;
	stop(): Promise<void>;
}

export async function startRemotePeers(): Promise<RemotePeers> {
	const port = await freePort();
	const control = `http://127.0.0.1:${port}`;
	const proc = await startProcess({
		name: "bench-peers",
		args: [require.resolve("./peers-process"), String(port)],
		// ngircd is looked up on PATH.
		env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
		ready: () => answers200(`${control}/peers`),
		readyTimeoutMs: 20000,
	});
	const json = async (path: string) => {
		const res = await fetch(control + path);
		if (res.status !== 200) throw new Error(`peers process: GET ${path} answered ${res.status}`);
		return res.json();
	};
	const info = (await json("/peers")) as Pick<RemotePeers, "trackerUrl" | "smtpUrl" | "ircPort" | "ircChannel">;
	return {
		...info,
		proc,
		counts: run => json(`/counts?run=${encodeURIComponent(run)}`) as Promise<Record<PeerKind, number>>,
		receipts: run => json(`/receipts?run=${encodeURIComponent(run)}`) as Promise<Receipts>,
		stop: async () => void (await stopProcess(proc, "SIGTERM", 5000)),
	};
}

/**
 * Waits until each of `kinds` has seen `count` distinct events of the run; the counts it last read
 * (some below `count` when `timeoutMs` ran out).
 */
export async function awaitDeliveries(
	peers: RemotePeers,
	run: string,
	count: number,
	timeoutMs: number,
	kinds: readonly PeerKind[] = PEER_KINDS,
): Promise<Record<PeerKind, number>> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const counts = await peers.counts(run);
		if (kinds.every(k => counts[k] >= count) || Date.now() > deadline) return counts;
		await new Promise(r => setTimeout(r, 100));
	}
}
