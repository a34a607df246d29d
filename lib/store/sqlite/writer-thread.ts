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
import { isStorageFault, isUniqueError, type Connection } from "./connection";
import { openForWriting } from "./writer-start";
import { Writes, type WriteRequest } from "./writes";

export type Failure = { kind: "unique" | "unavailable" | "error"; message: string };
type Reply = { id: number; value?: unknown; failure?: Failure };
export type Envelope = { id: number; request: WriteRequest };
/** What the thread posts: its start, or the answers of one transaction. */
export type ThreadMessage = { started: true } | { startFailed: Failure } | { replies: Reply[] };

/**
 * How long after a commit the log is checkpointed into the database file (passively: no reader or
 * writer waits for it), so that the file alone holds every write but those of the last moments:
 * what a lost write-ahead log can cost (docs/operations.md#damaged-store).
 */
const CHECKPOINT_AFTER_MS = 1000;

/** Requests in one transaction at most (more wait for the next). */
const MAX_BATCH = 2000;

const describe = (err: unknown): Failure => ({
	kind: isUniqueError(err) ? "unique" : isStorageFault(err) ? "unavailable" : "error",
	message: err instanceof Error ? err.message : String(err),
});

function main(): void {
	const port = parentPort!;
	const { dataDir } = workerData as { dataDir: string };
	let conn: Connection;
	try {
		conn = openForWriting(dataDir);
	} catch (err) {
		port.postMessage({ startFailed: describe(err) } satisfies ThreadMessage);
		return;
	}
	const writes = new Writes(conn);
	const queue: Envelope[] = [];
	let scheduled = false;
	let closing = false;
	let checkpointDue: NodeJS.Timeout | undefined;

	/** Copies the log into the database file as far as readers allow; a fault is the next commit's to report. */
	const checkpoint = () => {
		checkpointDue = undefined;
		try {
			conn.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
		} catch {
			// The next write meets the same fault and answers it.
		}
	};
	/** The database file complete, the log emptied, then the connection closed (removing both once it is the last). */
	const close = () => {
		clearTimeout(checkpointDue);
		try {
			conn.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
		} catch {
			// Another process reading holds the log: the last connection to close checkpoints it.
		}
		conn.close();
		port.close();
	};

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
		if (batch.length) {
			port.postMessage({ replies: commit(batch) } satisfies ThreadMessage);
			checkpointDue ??= setTimeout(checkpoint, CHECKPOINT_AFTER_MS);
		}
		if (queue.length) schedule();
		else if (closing) close();
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
