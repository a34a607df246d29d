/** The CI side of builds in tests: the internal build API, streamed artifacts, byte streams and memory. */
import crypto from "crypto";
import fs from "fs";
import http from "http";
import { Readable } from "stream";
import { client, type Client, type Reply } from "./http";

export const SHA_A = "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd";
export const SHA_B = "1ee3ae198f8601a285adcf5c0fff204ee6fba5fe";

export interface NewBuildBody {
	project_id: number;
	name?: string;
	stage?: string;
	ref?: string;
	tag?: boolean;
	user_id?: number;
	sha?: string;
}

/** The internal API (`Gitlab-Shared-Secret`), as a runner would call it. */
export function internalApi(baseUrl: string, secret: string) {
	const c: Client = client(baseUrl);
	const headers = { "Gitlab-Shared-Secret": secret };
	return {
		raw: c,
		headers,
		async create(b: NewBuildBody): Promise<Reply> {
			return c.post("/internal/builds", {
				headers,
				body: {
					project_id: b.project_id,
					name: b.name ?? "rspec",
					stage: b.stage ?? "test",
					ref: b.ref ?? "master",
					tag: b.tag ?? false,
					...(b.user_id ? { user_id: b.user_id } : {}),
					commit: {
						id: b.sha ?? SHA_A,
						title: "Test the CI integration.",
						message: "Test the CI integration.\n\nWith a body.",
						author_name: "Dmitriy Zaporozhets",
						author_email: "dmitriy.zaporozhets@gmail.com",
						created_at: "2015-12-24T16:51:14.000+01:00",
					},
				},
			});
		},
		/** Creates a build and returns its id, failing loudly otherwise. */
		async build(b: NewBuildBody): Promise<number> {
			const res = await this.create(b);
			if (res.status !== 201) throw new Error(`create build: ${res.status} ${res.text}`);
			return res.body.id;
		},
		state(buildId: number | string, status: string, coverage?: number | null): Promise<Reply> {
			return c.put(`/internal/builds/${buildId}`, { headers, body: coverage === undefined ? { status } : { status, coverage } });
		},
		/** Moves a new build to `status` through the runner's transitions. */
		async drive(buildId: number, status: "pending" | "running" | "success" | "failed"): Promise<void> {
			if (status === "pending") return;
			const steps = status === "running" ? ["running"] : ["running", status];
			for (const s of steps) {
				const res = await this.state(buildId, s);
				if (res.status !== 200) throw new Error(`state ${s}: ${res.status} ${res.text}`);
			}
		},
		trace(buildId: number | string, text: string, contentType = "text/plain"): Promise<Reply> {
			return c.patch(`/internal/builds/${buildId}/trace`, { headers: { ...headers, "Content-Type": contentType }, body: text });
		},
		/** Uploads bytes held in memory (small artifacts); see streamUpload for large ones. */
		async upload(buildId: number | string, data: Buffer, filename: string | null = "ci_build_artifacts.zip"): Promise<Reply> {
			const url = new URL(`${baseUrl}/internal/builds/${buildId}/artifacts`);
			if (filename !== null) url.searchParams.set("filename", filename);
			const res = await fetch(url, { method: "PUT", headers: { ...headers, "Content-Type": "application/octet-stream" }, body: data });
			const text = await res.text();
			let body: any = text;
			try {
				body = JSON.parse(text);
			} catch {
				// not JSON
			}
			return { status: res.status, headers: res.headers, body, text };
		},
	};
}

export type InternalApi = ReturnType<typeof internalApi>;

/** Deterministic pseudo-random bytes in chunks, never held whole in memory. */
export function* pseudoRandom(total: number, chunk = 256 * 1024, seed = 7): Generator<Buffer> {
	let x = seed >>> 0;
	for (let sent = 0; sent < total; sent += chunk) {
		const buf = Buffer.allocUnsafe(Math.min(chunk, total - sent));
		for (let i = 0; i + 4 <= buf.length; i += 4) {
			x ^= x << 13;
			x ^= x >>> 17;
			x ^= x << 5;
			buf.writeUInt32LE(x >>> 0, i);
		}
		for (let i = buf.length - (buf.length % 4); i < buf.length; i++) buf[i] = i & 0xff;
		yield buf;
	}
}

/** Streams `total` pseudo-random bytes as a PUT body; resolves with the answer and the bytes' sha256. */
export function streamUpload(
	url: string,
	headers: Record<string, string>,
	total: number,
	opts: { chunked?: boolean } = {},
): Promise<{ status: number; body: string; sha256: string }> {
	const hash = crypto.createHash("sha256");
	const source = Readable.from(
		(function* () {
			for (const chunk of pseudoRandom(total)) {
				hash.update(chunk);
				yield chunk;
			}
		})(),
	);
	return new Promise((resolve, reject) => {
		const req = http.request(url, {
			method: "PUT",
			headers: {
				...headers,
				"Content-Type": "application/octet-stream",
				...(opts.chunked ? { "Transfer-Encoding": "chunked" } : { "Content-Length": String(total) }),
			},
		});
		req.on("response", res => {
			const parts: Buffer[] = [];
			res.on("data", c => parts.push(c));
			res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString(), sha256: hash.digest("hex") }));
		});
		req.on("error", reject);
		source.pipe(req);
	});
}

/**
 * A PUT of `total` announced bytes that the test writes itself (`request.write`, `request.end`), to
 * stop or cut it half way; `outcome` says how it ended: `HTTP <status>` or `error <message>`.
 */
export function openUpload(url: string, headers: Record<string, string>, total: number): { request: http.ClientRequest; outcome: Promise<string> } {
	const request = http.request(url, {
		method: "PUT",
		headers: { ...headers, "Content-Type": "application/octet-stream", "Content-Length": String(total) },
	});
	const outcome = new Promise<string>(resolve => {
		request.on("response", res => (res.resume(), resolve(`HTTP ${res.statusCode}`)));
		request.on("error", err => resolve(`error ${err.message}`));
	});
	return { request, outcome };
}

/** Downloads `url`, hashing the body as it comes; `onResponse` may slow the reader down. */
export function streamDownload(
	url: string,
	headers: Record<string, string>,
	opts: { beforeReading?: () => Promise<void>; perChunk?: () => Promise<void> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: number; sha256: string }> {
	return new Promise((resolve, reject) => {
		http.get(url, { headers }, res => {
			res.pause();
			const hash = crypto.createHash("sha256");
			let bytes = 0;
			const read = async () => {
				await opts.beforeReading?.();
				for await (const chunk of res) {
					hash.update(chunk);
					bytes += chunk.length;
					await opts.perChunk?.();
				}
				resolve({ status: res.statusCode!, headers: res.headers, bytes, sha256: hash.digest("hex") });
			};
			read().catch(reject);
		}).on("error", reject);
	});
}

export function sha256Of(total: number): string {
	const hash = crypto.createHash("sha256");
	for (const chunk of pseudoRandom(total)) hash.update(chunk);
	return hash.digest("hex");
}

/** Peak resident memory of a process so far (VmHWM), in bytes. */
export function peakRss(pid: number): number {
	const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no VmHWM for ${pid}`);
	return Number(m[1]) * 1024;
}

/** Resets a process's VmHWM to its current RSS, so that the next peak is this phase's. */
export function resetPeakRss(pid: number): void {
	fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Current resident memory of a process, in bytes. */
export function currentRss(pid: number): number {
	const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no VmRSS for ${pid}`);
	return Number(m[1]) * 1024;
}

/** Every file under a directory, relative to it (missing directory: none). */
export function filesUnder(dir: string): string[] {
	if (!fs.existsSync(dir)) return [];
	const out: string[] = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
		if (entry.isFile()) out.push(`${entry.parentPath ?? (entry as any).path}/${entry.name}`.slice(dir.length + 1));
	}
	return out.sort();
}
