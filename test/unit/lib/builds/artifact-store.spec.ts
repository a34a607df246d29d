import crypto from "crypto";
import fs from "fs";
import http from "http";
import type { AddressInfo } from "net";
import os from "os";
import path from "path";
import { once } from "events";
import { PassThrough, Readable, Writable } from "stream";
import { ArtifactIncomplete, ArtifactInterrupted, ArtifactTooLarge, TraceTooLarge, UploadGone } from "../../../../lib/builds/artifact-errors";
import { ArtifactStore } from "../../../../lib/builds/artifact-store";
import { MAX_TRACE_BYTES, type OpenedFile } from "../../../../lib/builds/artifact-storage";
import { openFiles } from "../../../support/open-files";

let root: string;
let store: ArtifactStore;
const MAX = 1024 * 1024;

beforeEach(async () => {
	root = await fs.promises.mkdtemp(path.join(os.tmpdir(), "artifact-store-"));
	store = new ArtifactStore(root, MAX);
});

afterEach(async () => {
	await fs.promises.rm(root, { recursive: true, force: true });
});

function sha256(data: Buffer | string): string {
	return crypto.createHash("sha256").update(data).digest("hex");
}

async function readAll(stream: Readable): Promise<Buffer> {
	const parts: Buffer[] = [];
	for await (const chunk of stream) parts.push(Buffer.from(chunk));
	return Buffer.concat(parts);
}

/**
 * A sink that takes each chunk's bytes only when it calls back (after `delayMs`), as a socket
 * does: were a chunk's memory reused before that, what it keeps would be the later bytes.
 */
function lateCopyingSink(delayMs = 0): Writable & { bytes(): Buffer } {
	const parts: Buffer[] = [];
	const sink = new Writable({
		write(chunk: Buffer, _enc, done) {
			setTimeout(() => {
				parts.push(Buffer.from(chunk));
				done();
			}, delayMs);
		},
	});
	return Object.assign(sink, { bytes: () => Buffer.concat(parts) });
}

async function sendAll(opened: OpenedFile): Promise<Buffer> {
	const sink = lateCopyingSink();
	await opened.sendTo(sink);
	return sink.bytes();
}

/** Open files of this process under the store's root. */
const openStoredFiles = () => openFiles(file => file.startsWith(root));

/** Deterministic pseudo-random bytes in `chunk`-sized pieces, never held whole in memory. */
function* bytes(total: number, chunk = 64 * 1024, seed = 1): Generator<Buffer> {
	let x = seed;
	for (let sent = 0; sent < total; sent += chunk) {
		const buf = Buffer.alloc(Math.min(chunk, total - sent));
		for (let i = 0; i < buf.length; i++) {
			x = (x * 1103515245 + 12345) & 0x7fffffff;
			buf[i] = x >>> 16;
		}
		yield buf;
	}
}

function hashOf(total: number, seed = 1): string {
	const h = crypto.createHash("sha256");
	for (const b of bytes(total, 64 * 1024, seed)) h.update(b);
	return h.digest("hex");
}

/** Everything under the root except the build's files named in `keep`. */
async function listTree(dir = root): Promise<string[]> {
	const out: string[] = [];
	for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) out.push(...(await listTree(full)));
		else out.push(path.relative(root, full));
	}
	return out.sort();
}

async function tmpFiles(): Promise<string[]> {
	return (await listTree()).filter(f => f.startsWith(".tmp"));
}

describe("ArtifactStore.writeArtifact", () => {
	it("streams the bytes into a new file under <root>/<project>/<build>/ and leaves no temp file", async () => {
		const data = Buffer.from("PK\x03\x04 hello \xff artifacts", "latin1");
		const stored = await store.writeArtifact(7, 42, Readable.from([data]));
		expect(stored.size).toBe(data.length);
		expect(stored.file).toMatch(/^artifacts-[a-z0-9]+-[0-9a-f]{16}$/);
		const file = path.join(root, "7", "42", stored.file);
		expect(await fs.promises.readFile(file)).toEqual(data);
		expect(await listTree()).toEqual([path.join("7", "42", stored.file)]);
	});

	it("stores a multi-chunk upload byte for byte", async () => {
		const total = MAX - 17;
		const stored = await store.writeArtifact(1, 2, Readable.from(bytes(total, 10_000)));
		expect(stored.size).toBe(total);
		expect(sha256(await fs.promises.readFile(store.artifactPath(1, 2, stored.file)))).toBe(hashOf(total));
	});

	it("accepts exactly the size limit, and an empty upload", async () => {
		expect((await store.writeArtifact(1, 2, Readable.from(bytes(MAX)))).size).toBe(MAX);
		expect((await store.writeArtifact(1, 3, Readable.from([]))).size).toBe(0);
	});

	it("gives every upload a new name so the previous file stays until the caller removes it", async () => {
		const a = await store.writeArtifact(1, 2, Readable.from([Buffer.from("one")]));
		const b = await store.writeArtifact(1, 2, Readable.from([Buffer.from("two")]));
		expect(a.file).not.toBe(b.file);
		expect(await fs.promises.readFile(store.artifactPath(1, 2, a.file), "utf8")).toBe("one");
		expect(await fs.promises.readFile(store.artifactPath(1, 2, b.file), "utf8")).toBe("two");
	});

	describe("failures leave no partial file and the previous artifact untouched", () => {
		let previous: string;
		beforeEach(async () => {
			previous = (await store.writeArtifact(1, 2, Readable.from([Buffer.from("previous artifact")]))).file;
		});

		async function expectUntouched(): Promise<void> {
			expect(await listTree()).toEqual([path.join("1", "2", previous)]);
			expect(await fs.promises.readFile(store.artifactPath(1, 2, previous), "utf8")).toBe("previous artifact");
		}

		it("over the size limit → ArtifactTooLarge", async () => {
			await expect(store.writeArtifact(1, 2, Readable.from(bytes(MAX + 1)))).rejects.toBeInstanceOf(ArtifactTooLarge);
			await expectUntouched();
		});

		it("an announced length over the limit is refused before reading", async () => {
			const source = new PassThrough();
			await expect(store.writeArtifact(1, 2, source, { expectedBytes: MAX + 1 })).rejects.toBeInstanceOf(ArtifactTooLarge);
			// The source is drained, not destroyed: its producer can still be answered.
			expect(source.destroyed).toBe(false);
			source.end(Buffer.alloc(10));
			await new Promise(resolve => source.on("end", resolve));
			await expectUntouched();
		});

		it("a source that ends before the announced length → ArtifactIncomplete", async () => {
			const err = await store.writeArtifact(1, 2, Readable.from([Buffer.alloc(100)]), { expectedBytes: 150 }).catch(e => e);
			expect(err).toBeInstanceOf(ArtifactIncomplete);
			expect(err).toMatchObject({ expected: 150, received: 100 });
			await expectUntouched();
		});

		it("a source that errors midway → ArtifactInterrupted carrying that error", async () => {
			const source = new PassThrough();
			const writing = store.writeArtifact(1, 2, source);
			source.write(Buffer.alloc(5000, 1));
			setTimeout(() => source.destroy(new Error("connection lost")), 20);
			const err = await writing.catch(e => e);
			expect(err).toBeInstanceOf(ArtifactInterrupted);
			expect(err.message).toBe("artifacts upload interrupted: connection lost");
			await expectUntouched();
		});

		it("a source destroyed without an error → ArtifactInterrupted", async () => {
			const source = new PassThrough();
			const writing = store.writeArtifact(1, 2, source);
			source.write(Buffer.alloc(5000, 1));
			setTimeout(() => source.destroy(), 20);
			await expect(writing).rejects.toBeInstanceOf(ArtifactInterrupted);
			await expectUntouched();
		});

		it("a disk that refuses the final move → the disk's error, and the complete temp file is removed too", async () => {
			// Where build 3's directory should go there is a file: the rename cannot happen.
			await fs.promises.writeFile(path.join(root, "1", "3"), "in the way");
			await expect(store.writeArtifact(1, 3, Readable.from([Buffer.from("x")]))).rejects.toMatchObject({ code: expect.stringMatching(/EEXIST|ENOTDIR/) });
			await fs.promises.unlink(path.join(root, "1", "3"));
			expect(await tmpFiles()).toEqual([]);
			await expectUntouched();
		});
	});

	describe("with a real HTTP request as the source", () => {
		let server: http.Server;
		let port: number;
		let outcome: Promise<unknown>;

		beforeEach(async () => {
			let settle!: (v: unknown) => void;
			outcome = new Promise(resolve => (settle = resolve));
			server = http.createServer((req, res) => {
				const expectedBytes = req.headers["content-length"] ? Number(req.headers["content-length"]) : undefined;
				store.writeArtifact(3, 4, req, { expectedBytes }).then(
					stored => {
						settle(stored);
						res.end(JSON.stringify(stored));
					},
					err => {
						settle(err);
						res.statusCode = err instanceof ArtifactTooLarge ? 413 : 400;
						res.end(err.name);
					},
				);
			});
			await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
			port = (server.address() as AddressInfo).port;
		});

		afterEach(async () => {
			server.closeAllConnections();
			await new Promise(resolve => server.close(resolve));
		});

		function put(headers: Record<string, string | number>): http.ClientRequest {
			return http.request({ host: "127.0.0.1", port, method: "PUT", path: "/", headers });
		}

		function response(req: http.ClientRequest): Promise<{ status: number; body: string }> {
			return new Promise((resolve, reject) => {
				req.on("response", res => void readAll(res).then(b => resolve({ status: res.statusCode!, body: b.toString() }), reject));
				req.on("error", reject);
			});
		}

		it("stores a complete upload", async () => {
			const req = put({ "content-length": 300_000 });
			const res = response(req);
			Readable.from(bytes(300_000)).pipe(req);
			expect((await res).status).toBe(200);
			const stored = (await outcome) as { file: string; size: number };
			expect(stored.size).toBe(300_000);
			expect(sha256(await fs.promises.readFile(store.artifactPath(3, 4, stored.file)))).toBe(hashOf(300_000));
		});

		it("a client that disconnects midway leaves nothing behind", async () => {
			const req = put({ "content-length": 500_000 });
			req.on("error", () => {});
			req.write(Buffer.alloc(100_000, 7));
			setTimeout(() => req.destroy(), 50);
			expect(await outcome).toBeInstanceOf(ArtifactInterrupted);
			expect(await listTree()).toEqual([]);
		});

		it("a chunked upload over the limit still gets its 413 answer", async () => {
			const req = put({ "transfer-encoding": "chunked" });
			const res = response(req);
			Readable.from(bytes(MAX + 100_000)).pipe(req);
			expect(await res).toEqual({ status: 413, body: "ArtifactTooLarge" });
			expect(await listTree()).toEqual([]);
		});
	});
});

describe("ArtifactStore reads and removal", () => {
	it("opens a stored file whole or by range, with the whole size", async () => {
		const stored = await store.writeArtifact(5, 6, Readable.from([Buffer.from("0123456789")]));
		const whole = await store.openArtifact(5, 6, stored.file);
		expect(whole!.size).toBe(10);
		expect((await sendAll(whole!)).toString()).toBe("0123456789");
		const part = await store.openArtifact(5, 6, stored.file, { start: 3, end: 6 });
		expect(part!.size).toBe(10);
		expect((await sendAll(part!)).toString()).toBe("3456");
	});

	it("measures a stored file, and answers null once it is gone", async () => {
		const stored = await store.writeArtifact(5, 7, Readable.from([Buffer.alloc(1234)]));
		expect(await store.artifactSize(5, 7, stored.file)).toBe(1234);
		await store.removeArtifact(5, 7, stored.file);
		expect(await store.artifactSize(5, 7, stored.file)).toBeNull();
	});

	it("prunes a build's directory only when it is empty", async () => {
		const stored = await store.writeArtifact(5, 8, Readable.from([Buffer.from("x")]));
		await store.pruneBuildDir(5, 8);
		expect(fs.existsSync(store.buildDir(5, 8))).toBe(true);
		await store.removeArtifact(5, 8, stored.file);
		await store.pruneBuildDir(5, 8);
		expect(fs.existsSync(store.buildDir(5, 8))).toBe(false);
		await store.pruneBuildDir(5, 8);
	});

	it("answers null for a file that is gone, and removal is idempotent", async () => {
		const stored = await store.writeArtifact(5, 6, Readable.from([Buffer.from("x")]));
		await store.removeArtifact(5, 6, stored.file);
		await store.removeArtifact(5, 6, stored.file);
		expect(await store.openArtifact(5, 6, stored.file)).toBeNull();
	});

	it("refuses names that are not stored artifacts names and ids that are not positive integers", () => {
		for (const bad of ["../../etc/passwd", "trace.log", "artifacts-x-y", "", "artifacts-abc-0123456789abcdef/.."])
			expect(() => store.artifactPath(1, 2, bad)).toThrow(TypeError);
		for (const bad of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
			expect(() => store.buildDir(bad, 1)).toThrow(TypeError);
			expect(() => store.buildDir(1, bad)).toThrow(TypeError);
		}
	});
});

describe("ArtifactStore traces", () => {
	it("appends, measures, reads and removes", async () => {
		expect(await store.traceSize(1, 9)).toBe(0);
		expect(await store.openTrace(1, 9)).toBeNull();
		expect(await store.appendTrace(1, 9, "$ make\n")).toBe(7);
		expect(await store.appendTrace(1, 9, Buffer.from("ok ✓\n"))).toBe(7 + Buffer.byteLength("ok ✓\n"));
		const opened = await store.openTrace(1, 9);
		expect((await sendAll(opened!)).toString()).toBe("$ make\nok ✓\n");
		await store.removeTrace(1, 9);
		await store.removeTrace(1, 9);
		expect(await store.traceSize(1, 9)).toBe(0);
	});

	it("reads a byte range of the trace", async () => {
		await store.appendTrace(4, 4, "0123456789");
		const part = await store.openTrace(4, 4, { start: 2, end: 5 });
		expect(part!.size).toBe(10);
		expect((await sendAll(part!)).toString()).toBe("2345");
	});

	it("refuses an append that would take the trace past its limit, whole", async () => {
		expect(store.maxTraceBytes).toBe(MAX_TRACE_BYTES);
		expect(MAX_TRACE_BYTES).toBe(100 * 1024 * 1024);
		const small = new ArtifactStore(root, MAX, 100);
		expect(await small.appendTrace(1, 5, "x".repeat(60))).toBe(60);
		await expect(small.appendTrace(1, 5, "y".repeat(41))).rejects.toBeInstanceOf(TraceTooLarge);
		// Counted in bytes, not characters: 20 × "é" is 40 bytes.
		await expect(small.appendTrace(1, 5, "é".repeat(21))).rejects.toBeInstanceOf(TraceTooLarge);
		expect(await small.traceSize(1, 5)).toBe(60);
		expect(await small.appendTrace(1, 5, "é".repeat(20))).toBe(100);
		await expect(small.appendTrace(1, 5, "z")).rejects.toBeInstanceOf(TraceTooLarge);
	});

	it("keeps every line of concurrent appends", async () => {
		const lines = Array.from({ length: 200 }, (_, i) => `line ${i}\n`);
		await Promise.all(lines.map(l => store.appendTrace(2, 3, l)));
		const text = (await sendAll((await store.openTrace(2, 3))!)).toString();
		expect(text.split("\n").filter(Boolean).sort()).toEqual(lines.map(l => l.trim()).sort());
	});
});

describe("ArtifactStore.sweepStaleUploads", () => {
	it("removes only uploads idle for longer than the grace period", async () => {
		const tmp = path.join(root, ".tmp");
		await fs.promises.mkdir(tmp);
		const now = Date.now();
		await fs.promises.writeFile(path.join(tmp, "1-old.part"), "x");
		await fs.promises.writeFile(path.join(tmp, "2-fresh.part"), "x");
		await fs.promises.writeFile(path.join(tmp, "keep.txt"), "x");
		const old = new Date(now - 2 * 3600_000);
		await fs.promises.utimes(path.join(tmp, "1-old.part"), old, old);
		expect(await store.sweepStaleUploads(3600_000, now)).toBe(1);
		expect((await fs.promises.readdir(tmp)).sort()).toEqual(["2-fresh.part", "keep.txt"]);
	});

	it("is a no-op before any upload", async () => {
		expect(await store.sweepStaleUploads(1000)).toBe(0);
	});
});

describe("ArtifactStore uploads in two steps (the gateway writes, builds commits)", () => {
	it("keeps a written upload out of sight until it is committed", async () => {
		const pending = await store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from([Buffer.from("abc"), Buffer.from("def")]));
		expect(pending).toEqual({ upload: expect.stringMatching(/^\.tmp\/3-[0-9a-f]{16}\.part$/), size: 6 });
		expect(await listTree()).toEqual([pending.upload]);
		const stored = await store.commitUpload(2, 3, pending.upload);
		expect(stored).toEqual({ file: expect.stringMatching(/^artifacts-[a-z0-9]+-[0-9a-f]{16}$/), size: 6 });
		expect(await listTree()).toEqual([`2/3/${stored.file}`]);
		// Committed once: a second commit finds nothing.
		await expect(store.commitUpload(2, 3, pending.upload)).rejects.toBeInstanceOf(UploadGone);
	});

	it("leaves no file behind when the commit cannot be made durable (the directory's fsync fails)", async () => {
		const pending = await store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from([Buffer.from("abc")]));
		const realOpen = fs.promises.open;
		const dir = path.join(root, "2", "3");
		const failing = { sync: () => Promise.reject(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" })), close: () => Promise.resolve() };
		const spy = jest
			.spyOn(fs.promises, "open")
			.mockImplementation(((file: fs.PathLike, ...rest: unknown[]) =>
				file === dir ? Promise.resolve(failing) : (realOpen as (...a: unknown[]) => unknown)(file, ...rest)) as typeof fs.promises.open);
		try {
			await expect(store.commitUpload(2, 3, pending.upload)).rejects.toThrow("EIO");
		} finally {
			spy.mockRestore();
		}
		expect(await listTree()).toEqual([]);
	});

	it("discards an upload, idempotently, and only one of the build when asked so", async () => {
		const pending = await store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from([Buffer.from("x")]));
		await expect(store.discardUpload(pending.upload, 4)).rejects.toThrow(/not an upload of this build/);
		await store.discardUpload(pending.upload, 3);
		await store.discardUpload(pending.upload);
		expect(await listTree()).toEqual([]);
	});

	it("commits only names it made, of the same build", async () => {
		const pending = await store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from([Buffer.from("x")]));
		for (const upload of ["../x.part", ".tmp/3-../../../etc.part", "/etc/passwd", ".tmp/3-0123456789abcdef.part/..", "2/3/trace.log", ""])
			await expect(store.commitUpload(2, 3, upload)).rejects.toThrow(/not an upload of this build/);
		await expect(store.commitUpload(2, 4, pending.upload)).rejects.toThrow(/not an upload of this build/);
		expect(await listTree()).toEqual([pending.upload]);
	});

	it("fails a source already gone before the write starts (a client that left during the authorization)", async () => {
		const source = new PassThrough();
		source.write(Buffer.alloc(1000));
		source.destroy();
		await once(source, "close");
		await expect(store.writeUpload({ projectId: 2, buildId: 3 }, source)).rejects.toBeInstanceOf(ArtifactInterrupted);
		const errored = new PassThrough();
		errored.on("error", () => {});
		const closed = new Promise(resolve => errored.on("close", resolve));
		errored.destroy(new Error("socket hang up"));
		await closed;
		await expect(store.writeUpload({ projectId: 2, buildId: 3 }, errored)).rejects.toThrow("artifacts upload interrupted: socket hang up");
		expect(await tmpFiles()).toEqual([]);
	});

	it("removes the partial file of a failed write (too large, short, interrupted)", async () => {
		await expect(store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from(bytes(MAX + 1)))).rejects.toBeInstanceOf(ArtifactTooLarge);
		await expect(store.writeUpload({ projectId: 2, buildId: 3 }, Readable.from([Buffer.from("abc")]), { expectedBytes: 4 })).rejects.toBeInstanceOf(
			ArtifactIncomplete,
		);
		const source = new PassThrough();
		const writing = store.writeUpload({ projectId: 2, buildId: 3 }, source);
		source.write(Buffer.alloc(1000));
		await new Promise(r => setTimeout(r, 20));
		source.destroy();
		await expect(writing).rejects.toBeInstanceOf(ArtifactInterrupted);
		expect(await listTree()).toEqual([]);
	});
});

describe("ArtifactStore.openObject (by key, as the gateway reads)", () => {
	it("opens a stored artifacts file and a trace by their keys, whole or by range", async () => {
		const stored = await store.writeArtifact(2, 3, Readable.from([Buffer.from("0123456789")]));
		await store.appendTrace(2, 3, "line\n");
		const key = store.artifactKey(2, 3, stored.file);
		expect(key).toBe(`2/3/${stored.file}`);
		expect(store.traceKey(2, 3)).toBe("2/3/trace.log");
		const whole = await store.openObject(key);
		expect([whole!.size, (await sendAll(whole!)).toString()]).toEqual([10, "0123456789"]);
		const part = await store.openObject(key, { start: 7, end: 9 });
		expect([part!.size, (await sendAll(part!)).toString()]).toEqual([10, "789"]);
		expect((await sendAll((await store.openObject("2/3/trace.log"))!)).toString()).toBe("line\n");
		await store.removeArtifact(2, 3, stored.file);
		expect(await store.openObject(key)).toBeNull();
	});

	it("sends byte for byte, whole and by ranges across its reads, reusing a read's memory only once the sink is done with it", async () => {
		const size = 2 * 1024 * 1024 + 12345;
		const data = Buffer.concat([...bytes(size, 64 * 1024, 7)]);
		await store.appendTrace(2, 3, data);
		const whole = lateCopyingSink(2);
		await (await store.openObject("2/3/trace.log"))!.sendTo(whole);
		expect(sha256(whole.bytes())).toBe(sha256(data));
		for (const [start, end] of [
			[0, 0],
			[100, 262144 + 99],
			[262143, 262144],
			[1000, size - 1],
			[size - 1, size - 1],
		]) {
			const part = lateCopyingSink(1);
			await (await store.openObject("2/3/trace.log", { start, end }))!.sendTo(part);
			expect([start, end, sha256(part.bytes())]).toEqual([start, end, sha256(data.subarray(start, end + 1))]);
		}
	});

	it("reads no further than two reads (512 KiB) ahead of a sink that stops taking them, and closes the file when the sink goes", async () => {
		const size = 8 * 1024 * 1024;
		await store.appendTrace(2, 3, Buffer.alloc(size, 1));
		const before = openStoredFiles();
		const opened = (await store.openObject("2/3/trace.log"))!;
		expect(opened.size).toBe(size);
		let calls = 0;
		const stuck = new Writable({ highWaterMark: 1, write: () => void calls++ });
		const sending = opened.sendTo(stuck);
		await new Promise(r => setTimeout(r, 100));
		// One chunk with the sink, the next read waiting behind it, and nothing more read.
		expect([calls, stuck.writableLength]).toEqual([1, 512 * 1024]);
		stuck.destroy();
		await expect(sending).rejects.toThrow(/premature close/i);
		expect(openStoredFiles()).toBe(before);
	});

	it("fails a send when the file turns out shorter than it was opened as, without ending the sink", async () => {
		await store.appendTrace(2, 3, Buffer.alloc(1024 * 1024, 2));
		const before = openStoredFiles();
		const opened = (await store.openObject("2/3/trace.log"))!;
		await fs.promises.truncate(store.objectPath("2/3/trace.log"), 300 * 1024);
		const sink = lateCopyingSink();
		await expect(opened.sendTo(sink)).rejects.toThrow("file ended at byte 307200 of 1048576");
		// Every byte there was went to the sink (taken, or still in its hands), and it was not ended.
		expect([sink.writableEnded, sink.bytes().length + sink.writableLength]).toEqual([false, 300 * 1024]);
		expect(openStoredFiles()).toBe(before);
	});

	it("closes a file opened and never sent", async () => {
		await store.appendTrace(2, 3, "x");
		const before = openStoredFiles();
		const opened = (await store.openObject("2/3/trace.log"))!;
		expect(openStoredFiles()).toBe(before + 1);
		await opened.close();
		expect(openStoredFiles()).toBe(before);
	});

	it("refuses any key it does not make, so nothing outside the root is ever opened", async () => {
		const outside = path.join(path.dirname(root), `outside-${path.basename(root)}`);
		await fs.promises.writeFile(outside, "secret");
		try {
			for (const key of [
				"../" + path.basename(outside),
				"/etc/passwd",
				"2/3/../../../etc/passwd",
				"2/3/artifacts-x-0123456789abcdef/../../../../etc/passwd",
				".tmp/3-0123456789abcdef.part",
				"0/3/trace.log",
				"2/3/trace.log/",
				"2\\3\\trace.log",
				"2/3/other.txt",
				"",
			])
				await expect(store.openObject(key)).rejects.toThrow(/not a stored object key/);
		} finally {
			await fs.promises.unlink(outside);
		}
	});
});
