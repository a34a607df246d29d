/**
 * The event loop's side of the writer thread (./writer-thread.ts): each write is a message, its
 * promise settles with the answer of the transaction it went into, after that commit's sync. A
 * thread that dies (it should not) fails what it held as unavailable and is started again by the
 * next write.
 */
import path from "path";
import { Worker } from "worker_threads";
import type { Logger } from "moleculer";
import { unavailable } from "../../api/errors";
import { UniqueViolation } from "../types";
import { StoreStartError } from "./data-dir";
import { DATABASE_FILE } from "./store-files";
import type { Envelope, Failure, ThreadMessage } from "./writer-thread";
import type { WriteRequest, WriteResults } from "./writes";

/** A store whose writes fail is logged once, then at most this often while it goes on failing. */
const FAULT_LOG_EVERY_MS = 10000;

interface Pending {
	resolve(value: unknown): void;
	reject(err: Error): void;
}

/** The thread's entry beside this file: compiled JavaScript, or TypeScript through tsx when run from the sources (tests). */
function threadEntry(): { file: string; execArgv: string[] } {
	const ext = path.extname(__filename);
	const file = path.join(__dirname, `writer-thread${ext}`);
	return ext === ".ts" ? { file, execArgv: ["--import", require.resolve("tsx")] } : { file, execArgv: [] };
}

export class Writer {
	private worker?: Worker;
	private starting?: Promise<Worker>;
	private readonly pending = new Map<number, Pending>();
	private sent = 0;
	private faultLoggedAt = 0;
	private closed = false;
	private readonly file: string;

	constructor(
		private readonly dataDir: string,
		private readonly logger: Logger,
	) {
		this.file = path.join(dataDir, DATABASE_FILE);
	}

	/** Starts the thread; throws StoreStartError when it cannot open the database. */
	async start(): Promise<void> {
		await this.thread();
	}

	private thread(): Promise<Worker> {
		if (this.worker) return Promise.resolve(this.worker);
		return (this.starting ??= new Promise<Worker>((resolve, reject) => {
			const { file, execArgv } = threadEntry();
			const worker = new Worker(file, { workerData: { dataDir: this.dataDir }, execArgv });
			worker.unref();
			worker.on("message", (m: ThreadMessage) => {
				if ("started" in m) {
					this.worker = worker;
					resolve(worker);
				} else if ("startFailed" in m) reject(new StoreStartError(m.startFailed.message));
				else for (const r of m.replies) this.settle(r.id, r.value, r.failure);
			});
			worker.on("error", (err: Error) => {
				this.logger.error(`${this.file}: the store's writer thread failed (${err.message})`);
				reject(err);
			});
			worker.on("exit", () => {
				if (this.worker === worker) this.worker = undefined;
				for (const id of [...this.pending.keys()]) this.settle(id, undefined, { kind: "unavailable", message: "the writer thread ended" });
			});
		}).finally(() => (this.starting = undefined)));
	}

	private settle(id: number, value: unknown, failure?: Failure): void {
		const p = this.pending.get(id);
		if (!p) return;
		this.pending.delete(id);
		if (!failure) {
			if (this.faultLoggedAt) this.logger.info(`${this.file}: writes are stored again`);
			this.faultLoggedAt = 0;
			return p.resolve(value);
		}
		if (failure.kind === "unique") return p.reject(new UniqueViolation());
		if (failure.kind === "unavailable") {
			if (Date.now() - this.faultLoggedAt > FAULT_LOG_EVERY_MS) {
				this.logger.error(`${this.file}: a write could not be stored (${failure.message}); it is not kept and answered 503`);
				this.faultLoggedAt = Date.now();
			}
			return p.reject(unavailable());
		}
		p.reject(new Error(failure.message));
	}

	async request<K extends WriteRequest["op"]>(request: Extract<WriteRequest, { op: K }>): Promise<WriteResults[K]> {
		if (this.closed) throw unavailable();
		const worker = await this.thread().catch(() => {
			throw unavailable();
		});
		const id = ++this.sent;
		return new Promise<WriteResults[K]>((resolve, reject) => {
			this.pending.set(id, { resolve, reject });
			worker.postMessage({ id, request } satisfies Envelope);
		});
	}

	/** Lets what was sent finish, then closes the connection and ends the thread. */
	async close(): Promise<void> {
		this.closed = true;
		const worker = this.worker ?? (await this.starting?.catch(() => undefined));
		if (!worker) return;
		const exited = new Promise(resolve => worker.once("exit", resolve));
		worker.postMessage("close");
		await exited;
	}
}
