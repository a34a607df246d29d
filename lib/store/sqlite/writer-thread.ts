/**
 * The embedded store's writer: a worker thread that owns the one connection which writes, so that
 * the sync of each commit (`synchronous=FULL`) never stalls the event loop
 * (docs/architecture.md#embedded-store). Group commit: every request that arrived while the last
 * commit was syncing runs in the next transaction, each in a savepoint of its own (a refused
 * insert undoes only itself), and all of them are answered once that transaction's commit is on
 * the disk. A storage fault (full or failing disk, another process holding the lock too long)
 * rolls the whole transaction back and answers each of its requests as unavailable.
 */
import { parentPort, receiveMessageOnPort, workerData } from "worker_threads";
import { isLockContention, isStorageFault, isUniqueError, openConnection, type Connection } from "./connection";
import { createStoreTables } from "./schema";
import { Writes, type WriteRequest } from "./writes";

export type Failure = { kind: "unique" | "unavailable" | "error"; message: string };
type Reply = { id: number; value?: unknown; failure?: Failure };
export type Envelope = { id: number; request: WriteRequest };
/** What the thread posts: its start, or the answers of one transaction. */
export type ThreadMessage = { started: true } | { startFailed: Failure } | { replies: Reply[] };

/**
 * How long the start waits for other processes on the same DATA_DIR. Replicas that start together
 * contend for its first writes (the journal mode, the layout), and SQLite answers some of those
 * BUSY at once, without its busy timeout: the start tries again meanwhile.
 */
const START_WAIT_MS = 30000;

/** The writer's connection with the store's tables, once no other process's start holds the lock. */
function openForWriting(file: string): Connection {
	const until = Date.now() + START_WAIT_MS;
	const pause = new Int32Array(new SharedArrayBuffer(4));
	for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
		let conn: Connection | undefined;
		try {
			conn = openConnection(file, "writer");
			createStoreTables(conn.db);
			return conn;
		} catch (err) {
			conn?.close();
			if (!isLockContention(err) || Date.now() + wait > until) throw err;
			// This thread only writes: waiting here blocks no request.
			Atomics.wait(pause, 0, 0, wait);
		}
	}
}

/** Requests in one transaction at most (more wait for the next). */
const MAX_BATCH = 2000;

const describe = (err: unknown): Failure => ({
	kind: isUniqueError(err) ? "unique" : isStorageFault(err) ? "unavailable" : "error",
	message: err instanceof Error ? err.message : String(err),
});

function main(): void {
	const port = parentPort!;
	const { file } = workerData as { file: string };
	let conn: Connection;
	try {
		conn = openForWriting(file);
	} catch (err) {
		port.postMessage({ startFailed: describe(err) } satisfies ThreadMessage);
		return;
	}
	const writes = new Writes(conn);
	const queue: Envelope[] = [];
	let scheduled = false;
	let closing = false;

	/** One transaction for what is queued; its answers once the commit is on the disk. */
	const commit = (batch: Envelope[]): Reply[] => {
		const abort = (err: unknown): Reply[] => {
			if (conn.db.isTransaction) conn.db.exec("ROLLBACK");
			const failure = { ...describe(err), kind: "unavailable" as const };
			return batch.map(({ id }) => ({ id, failure }));
		};
		try {
			conn.db.exec("BEGIN IMMEDIATE");
			const replies: Reply[] = [];
			for (const { id, request } of batch) {
				conn.db.exec("SAVEPOINT request");
				try {
					replies.push({ id, value: writes.run(request) });
					conn.db.exec("RELEASE request");
				} catch (err) {
					if (isStorageFault(err)) return abort(err);
					conn.db.exec("ROLLBACK TO request; RELEASE request");
					replies.push({ id, failure: describe(err) });
				}
			}
			conn.db.exec("COMMIT");
			return replies;
		} catch (err) {
			return abort(err);
		}
	};

	const receive = (message: Envelope | "close") => {
		if (message === "close") closing = true;
		else queue.push(message);
	};
	const flush = () => {
		scheduled = false;
		for (let m; queue.length < MAX_BATCH && (m = receiveMessageOnPort(port));) receive(m.message as Envelope | "close");
		const batch = queue.splice(0, MAX_BATCH);
		if (batch.length) port.postMessage({ replies: commit(batch) } satisfies ThreadMessage);
		if (queue.length) schedule();
		else if (closing) {
			conn.close();
			port.close();
		}
	};
	const schedule = () => {
		if (scheduled) return;
		scheduled = true;
		setImmediate(flush);
	};

	port.on("message", (message: Envelope | "close") => {
		receive(message);
		schedule();
	});
	port.postMessage({ started: true } satisfies ThreadMessage);
}

main();
