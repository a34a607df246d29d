/**
 * A task tracker for tests: a real HTTP server speaking the slice of the Asana-style API the
 * task-tracker commenter uses (GET /tasks/:id, POST /tasks/:id/stories, PUT /tasks/:id) under
 * `/api/1.0`, recording every request. Tasks exist when listed in `tasks`; `down(status)` makes
 * every answer (or only the requests `only` picks) that status until `up()`. `hold()` keeps every request that arrives unanswered
 * (not recorded, no effect) until `release()`; one whose client went away meanwhile never
 * happened.
 */
import http from "http";
import type { AddressInfo } from "net";
import { performance } from "perf_hooks";

export interface RecordedRequest {
	method: string;
	path: string;
	authorization: string | undefined;
	contentType: string | undefined;
	body: any;
	/** performance.now() when the request was complete. */
	at: number;
}

export interface TaskTracker {
	/** The API root to put in TASK_TRACKER_API_URL. */
	apiUrl: string;
	port: number;
	requests: RecordedRequest[];
	/** Task id → completed. */
	tasks: Map<string, boolean>;
	/** Comments per task id, in arrival order. */
	comments: Map<string, string[]>;
	down(status?: number, only?: (req: { method: string; path: string }) => boolean): void;
	up(): void;
	/** Requests arrived but not yet handled (while held). */
	readonly held: number;
	hold(): void;
	release(): void;
	stop(): Promise<void>;
}

export async function startTaskTracker(taskIds: string[] = []): Promise<TaskTracker> {
	let downStatus: number | null = null;
	let downOnly: ((req: { method: string; path: string }) => boolean) | undefined;
	let holding = false;
	const waiting: (() => void)[] = [];
	const tracker = {
		requests: [] as RecordedRequest[],
		tasks: new Map(taskIds.map(id => [id, false])),
		comments: new Map<string, string[]>(),
	} as TaskTracker;

	const server = http.createServer((req, res) => {
		let raw = "";
		req.setEncoding("utf8");
		req.on("data", c => (raw += c));
		let gone = false;
		res.on("close", () => (gone = !res.writableFinished));
		req.on("end", () => (holding ? waiting.push(() => gone || handle()) : handle()));
		const handle = () => {
			let body: any = raw;
			try {
				body = raw ? JSON.parse(raw) : null;
			} catch {
				/* keep the text */
			}
			const path = (req.url ?? "").split("?")[0];
			tracker.requests.push({
				method: req.method ?? "",
				path,
				authorization: req.headers.authorization,
				contentType: req.headers["content-type"],
				body,
				at: performance.now(),
			});
			const send = (status: number, payload: unknown) => {
				res.writeHead(status, { "Content-Type": "application/json" });
				res.end(JSON.stringify(payload));
			};
			if (downStatus !== null && (!downOnly || downOnly({ method: req.method ?? "", path })))
				return send(downStatus, { errors: [{ message: "Service Unavailable" }] });
			if (!/^Bearer \S+$/.test(req.headers.authorization ?? "")) return send(401, { errors: [{ message: "Not Authorized" }] });
			const m = /^\/api\/1\.0\/tasks\/(\d+)(\/stories)?$/.exec(path);
			if (!m || !tracker.tasks.has(m[1])) return send(404, { errors: [{ message: "task: Not a recognized ID" }] });
			const id = m[1];
			if (req.method === "GET" && !m[2]) return send(200, { data: { gid: id, completed: tracker.tasks.get(id) } });
			if (req.method === "POST" && m[2]) {
				const text = body?.data?.text;
				if (typeof text !== "string") return send(400, { errors: [{ message: "text: Missing input" }] });
				tracker.comments.set(id, [...(tracker.comments.get(id) ?? []), text]);
				return send(201, { data: { gid: `${id}-${tracker.comments.get(id)!.length}`, text } });
			}
			if (req.method === "PUT" && !m[2]) {
				if (body?.data?.completed !== undefined) tracker.tasks.set(id, !!body.data.completed);
				return send(200, { data: { gid: id, completed: tracker.tasks.get(id) } });
			}
			send(405, { errors: [{ message: "Method not allowed" }] });
		};
	});
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	tracker.port = (server.address() as AddressInfo).port;
	tracker.apiUrl = `http://127.0.0.1:${tracker.port}/api/1.0`;
	tracker.down = (status = 503, only) => {
		downStatus = status;
		downOnly = only;
	};
	tracker.up = () => {
		downStatus = null;
		downOnly = undefined;
	};
	Object.defineProperty(tracker, "held", { get: () => waiting.length });
	tracker.hold = () => void (holding = true);
	tracker.release = () => {
		holding = false;
		for (const handle of waiting.splice(0)) handle();
	};
	tracker.stop = () =>
		new Promise<void>(resolve => {
			waiting.length = 0;
			server.closeAllConnections();
			server.close(() => resolve());
		});
	return tracker;
}
