/**
 * The S3 artifact store (lib/builds/s3-artifact-store.ts, s3-traces.ts, s3-objects.ts) against a
 * real S3 server, versitygw (test/support/s3-server.ts): uploads that stream in one PUT or in parts
 * and leave nothing when they fail, commits, ranged and random reads, trace appends with their
 * conditional writes and compaction, the sweep, presigned URLs, a key prefix, and the server going
 * away (a 503) and coming back.
 */
import crypto from "crypto";
import { PassThrough, Readable, Writable } from "stream";
import { ArtifactIncomplete, ArtifactInterrupted, ArtifactTooLarge, TraceTooLarge, UploadGone } from "../../../lib/builds/artifact-errors";
import type { OpenedFile } from "../../../lib/builds/artifact-storage";
import { S3ArtifactStore } from "../../../lib/builds/s3-artifact-store";
import type { S3Objects } from "../../../lib/builds/s3-objects";
import { S3Server } from "../../support/s3-server";

const MiB = 1024 * 1024;
const MAX = 20 * MiB;

let server: S3Server;
let bucket: string;
let store: S3ArtifactStore;
let objects: S3Objects;
const warnings: string[] = [];

beforeAll(async () => {
	server = await S3Server.start();
	bucket = await server.createBucket();
	store = new S3ArtifactStore(server.settings(bucket), MAX, { warn: (message: unknown) => warnings.push(String(message)) }, 64 * 1024);
	objects = server.objects(bucket);
}, 60000);

afterAll(async () => {
	store?.destroy();
	objects?.destroy();
	await server?.stop();
});

/** Every key in the bucket under `prefix`, and the multipart uploads in progress. */
async function contents(prefix = ""): Promise<{ keys: string[]; uploads: string[] }> {
	const keys: string[] = [];
	for await (const o of objects.list(prefix)) keys.push(o.name);
	const uploads: string[] = [];
	for await (const u of objects.listUploads()) if (u.name.startsWith(prefix)) uploads.push(u.name);
	return { keys, uploads };
}

/** Collects what an opened object sends. */
async function sent(opened: OpenedFile | null): Promise<Buffer> {
	if (!opened) throw new Error("not there");
	const chunks: Buffer[] = [];
	await opened.sendTo(
		new Writable({
			write(chunk, _enc, done) {
				chunks.push(Buffer.from(chunk));
				done();
			},
		}),
	);
	return Buffer.concat(chunks);
}

/** `bytes` random bytes as a stream of 1 MiB chunks (a client's body). */
function body(bytes: Buffer): Readable {
	return Readable.from(
		(function* () {
			for (let at = 0; at < bytes.length; at += MiB) yield bytes.subarray(at, at + MiB);
		})(),
	);
}

describe("uploads", () => {
	it.each([
		["one PUT (below a part)", 300 * 1024],
		["a multipart upload (beyond a part)", 19 * MiB + 17],
		["an empty file", 0],
	])(
		"%s: nothing but the marker until complete, then the object; the commit removes the marker",
		async (_what, size) => {
			const bytes = crypto.randomBytes(size);
			const pending = await store.writeUpload({ projectId: 7, buildId: 70 + (size % 10) }, body(bytes), { expectedBytes: size });
			const buildId = 70 + (size % 10);
			expect(pending.upload).toMatch(new RegExp(`^uploads/7/${buildId}/artifacts-[a-z0-9]+-[0-9a-f]{16}$`));
			expect(pending.size).toBe(size);
			const file = pending.upload.split("/").pop()!;
			expect(await contents(`7/${buildId}/`)).toEqual({ keys: [`7/${buildId}/${file}`], uploads: [] });
			expect((await contents("uploads/")).keys).toEqual([pending.upload]);
			expect(await store.commitUpload(7, buildId, pending.upload)).toEqual({ file, size });
			expect((await contents("uploads/")).keys).toEqual([]);
			expect((await sent(await store.openObject(store.artifactKey(7, buildId, file)))).equals(bytes)).toBe(true);
			// Committed once: a second commit of the same upload finds it gone.
			await expect(store.commitUpload(7, buildId, pending.upload)).rejects.toBeInstanceOf(UploadGone);
			await store.removeArtifact(7, buildId, file);
			expect(await store.openObject(store.artifactKey(7, buildId, file))).toBeNull();
		},
		60000,
	);

	it("an upload past the limit, an interrupted one and a short one leave no object, no part and no marker", async () => {
		const over = Readable.from(
			(function* () {
				for (let i = 0; i < 25; i++) yield crypto.randomBytes(MiB);
			})(),
		);
		await expect(store.writeUpload({ projectId: 8, buildId: 1 }, over)).rejects.toBeInstanceOf(ArtifactTooLarge);
		const cut = new PassThrough();
		const writing = store.writeUpload({ projectId: 8, buildId: 2 }, cut);
		for (let i = 0; i < 10; i++) cut.write(crypto.randomBytes(MiB));
		setTimeout(() => cut.destroy(new Error("socket hang up")), 200);
		await expect(writing).rejects.toBeInstanceOf(ArtifactInterrupted);
		await expect(store.writeUpload({ projectId: 8, buildId: 3 }, body(crypto.randomBytes(1000)), { expectedBytes: 2000 })).rejects.toBeInstanceOf(
			ArtifactIncomplete,
		);
		// Announced too large: refused before a byte is read or written.
		await expect(store.writeUpload({ projectId: 8, buildId: 4 }, body(Buffer.alloc(10)), { expectedBytes: MAX + 1 })).rejects.toBeInstanceOf(
			ArtifactTooLarge,
		);
		expect(await contents("8/")).toEqual({ keys: [], uploads: [] });
		expect((await contents("uploads/")).keys).toEqual([]);
	}, 60000);

	it("commits and discards only an upload of that build, by a name the store made", async () => {
		const pending = await store.writeUpload({ projectId: 9, buildId: 1 }, body(Buffer.from("zip")));
		for (const upload of ["../../etc/passwd", "uploads/9/1/../../x", "9/1/" + pending.upload.split("/").pop(), "/etc/passwd"])
			await expect(store.commitUpload(9, 1, upload)).rejects.toThrow(/not an upload of this build/);
		await expect(store.commitUpload(9, 2, pending.upload)).rejects.toThrow(/not an upload of this build/);
		await expect(store.commitUpload(10, 1, pending.upload)).rejects.toThrow(/not an upload of this build/);
		await expect(store.discardUpload(pending.upload, 2)).rejects.toThrow(/not an upload of this build/);
		await store.discardUpload(pending.upload, 1);
		await store.discardUpload(pending.upload);
		await expect(store.commitUpload(9, 1, pending.upload)).rejects.toBeInstanceOf(UploadGone);
		expect(await contents("9/")).toEqual({ keys: [], uploads: [] });
	});

	it("a commit and a discard of one upload: whichever claims it first decides, and the other changes nothing", async () => {
		const committed = await store.writeUpload({ projectId: 10, buildId: 1 }, body(Buffer.from("keep")));
		const { file } = await store.commitUpload(10, 1, committed.upload);
		// A gateway whose commit call timed out while builds committed: its discard must not remove the object.
		await store.discardUpload(committed.upload);
		expect((await sent(await store.openObject(store.artifactKey(10, 1, file)))).toString()).toBe("keep");
		const discarded = await store.writeUpload({ projectId: 10, buildId: 2 }, body(Buffer.from("drop")));
		await store.discardUpload(discarded.upload);
		await expect(store.commitUpload(10, 2, discarded.upload)).rejects.toBeInstanceOf(UploadGone);
		expect(await contents("10/2/")).toEqual({ keys: [], uploads: [] });
		for (let i = 3; i < 13; i++) {
			const pending = await store.writeUpload({ projectId: 10, buildId: i }, body(Buffer.from(`race ${i}`)));
			const [commit] = await Promise.allSettled([store.commitUpload(10, i, pending.upload), store.discardUpload(pending.upload)]);
			const left = (await contents(`10/${i}/`)).keys;
			if (commit.status === "fulfilled") expect(left).toEqual([`10/${i}/${commit.value.file}`]);
			else expect([commit.reason, left]).toEqual([expect.any(UploadGone), []]);
		}
		expect((await contents("uploads/")).keys).toEqual([]);
	}, 60000);

	it("the sweep removes what a dead process left an hour ago (a marker and its object, a multipart upload), and nothing younger", async () => {
		const leftOver = await store.writeUpload({ projectId: 11, buildId: 1 }, body(crypto.randomBytes(1000)));
		// A multipart upload a process began and never finished (it died mid-upload).
		const { CreateMultipartUploadCommand, UploadPartCommand } = await import("@aws-sdk/client-s3");
		const mpu = await objects.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "11/2/artifacts-abc-0123456789abcdef" }));
		await objects.client.send(
			new UploadPartCommand({
				Bucket: bucket,
				Key: "11/2/artifacts-abc-0123456789abcdef",
				UploadId: mpu.UploadId,
				PartNumber: 1,
				Body: crypto.randomBytes(6 * MiB),
			}),
		);
		expect(await store.sweepStaleUploads(60 * 60 * 1000)).toBe(0);
		expect((await contents("11/")).uploads).toHaveLength(1);
		// An hour later.
		expect(await store.sweepStaleUploads(60 * 60 * 1000, Date.now() + 61 * 60 * 1000)).toBe(2);
		expect(await contents("11/")).toEqual({ keys: [], uploads: [] });
		expect((await contents("uploads/")).keys).toEqual([]);
		await expect(store.commitUpload(11, 1, leftOver.upload)).rejects.toBeInstanceOf(UploadGone);
	}, 60000);
});

describe("reads", () => {
	let bytes: Buffer;
	let key: string;

	beforeAll(async () => {
		bytes = crypto.randomBytes(9 * MiB + 123);
		const pending = await store.writeUpload({ projectId: 12, buildId: 1 }, body(bytes));
		key = store.artifactKey(12, 1, (await store.commitUpload(12, 1, pending.upload)).file);
	}, 60000);

	it("sends any range exactly, with the whole object's size", async () => {
		for (const [start, end] of [
			[0, 0],
			[1000, 1999],
			[5 * MiB - 7, 8 * MiB + 3],
			[bytes.length - 10, bytes.length - 1],
		]) {
			const opened = await store.openObject(key, { start, end });
			expect(opened!.size).toBe(bytes.length);
			expect((await sent(opened)).equals(bytes.subarray(start, end + 1))).toBe(true);
		}
	});

	it("reads anywhere in the object, in pieces and as one stream", async () => {
		const file = (await store.openRandomAccess(key))!;
		expect(file.size).toBe(bytes.length);
		const buffer = Buffer.alloc(4096);
		expect(await file.read(buffer, 96, 4000, 7 * MiB)).toBe(4000);
		expect(buffer.subarray(96, 4096).equals(bytes.subarray(7 * MiB, 7 * MiB + 4000))).toBe(true);
		expect(await file.read(buffer, 0, 4096, bytes.length - 100)).toBe(100);
		const chunks: Buffer[] = [];
		for await (const chunk of await file.readStream!(MiB, 3 * MiB + 5)) chunks.push(chunk as Buffer);
		expect(Buffer.concat(chunks).equals(bytes.subarray(MiB, 3 * MiB + 5))).toBe(true);
		await file.close();
		expect(await store.openRandomAccess(store.artifactKey(12, 1, "artifacts-x-0123456789abcdef"))).toBeNull();
	});

	it("closing an opened object unsent lets its connection go (the next read is served)", async () => {
		for (let i = 0; i < 20; i++) await (await store.openObject(key))!.close();
		expect((await sent(await store.openObject(key, { start: 0, end: 9 }))).equals(bytes.subarray(0, 10))).toBe(true);
	});

	it("refuses a key the store does not make", async () => {
		for (const bad of ["../x", "1/2/passwd", "1/2/artifacts-../../x", "uploads/1/2/artifacts-a-0123456789abcdef"])
			await expect(store.openObject(bad)).rejects.toThrow(/not a stored object key/);
	});

	it("hands out a presigned URL only where downloads are not proxied, and only for an artifacts file", async () => {
		expect(await store.directDownloadUrl(key, { contentType: "application/octet-stream" })).toBeNull();
		const direct = new S3ArtifactStore(server.settings(bucket, { proxyDownload: false }), MAX);
		try {
			const url = await direct.directDownloadUrl(key, { contentType: "application/octet-stream", contentDisposition: "attachment; filename=a.zip" });
			expect(url).toMatch(new RegExp(`^${server.endpoint}/${bucket}/12/1/artifacts-.*X-Amz-Signature=`));
			const res = await fetch(url!, { headers: { Range: "bytes=10-19" } });
			expect([res.status, res.headers.get("content-disposition"), res.headers.get("content-type")]).toEqual([
				206,
				"attachment; filename=a.zip",
				"application/octet-stream",
			]);
			expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
			// Tampered with: refused by the server.
			expect((await fetch(url!.replace("12/1/", "12/2/"))).status).toBe(403);
			expect(await direct.directDownloadUrl(direct.traceKey(12, 1), { contentType: "text/plain" })).toBeNull();
		} finally {
			direct.destroy();
		}
	});
});

describe("traces", () => {
	it("appends in order, serves any range, and refuses an append past the limit whole", async () => {
		expect(await store.traceSize(20, 1)).toBe(0);
		expect(await store.openObject(store.traceKey(20, 1))).toBeNull();
		let text = "";
		for (const line of ["$ make\n", "cc -o app app.c\n", "ok\n"]) {
			text += line;
			expect(await store.appendTrace(20, 1, line)).toBe(Buffer.byteLength(text));
		}
		expect((await sent(await store.openObject(store.traceKey(20, 1)))).toString()).toBe(text);
		expect((await sent(await store.openObject(store.traceKey(20, 1), { start: 5, end: 12 }))).toString()).toBe(text.slice(5, 13));
		await expect(store.appendTrace(20, 1, "x".repeat(64 * 1024))).rejects.toBeInstanceOf(TraceTooLarge);
		expect(await store.traceSize(20, 1)).toBe(text.length);
	});

	it("concurrent appends each land whole, once, in places no two share", async () => {
		const lines = Array.from({ length: 24 }, (_, i) => `line ${i} ${"#".repeat(i)}\n`);
		const sizes = await Promise.all(lines.map(line => store.appendTrace(21, 1, line)));
		const trace = (await sent(await store.openObject(store.traceKey(21, 1)))).toString();
		expect(trace.length).toBe(lines.join("").length);
		expect(trace.split("\n").filter(Boolean).sort()).toEqual(lines.map(l => l.slice(0, -1)).sort());
		// Each answer is the size once its own append is in: at least that much, the largest the whole.
		for (const [i, size] of sizes.entries()) expect(size).toBeGreaterThanOrEqual(lines[i].length);
		expect(Math.max(...sizes)).toBe(trace.length);
		// The places are one unbroken run.
		expect((await contents("21/1/trace/")).keys).toEqual(lines.map((_, i) => `21/1/trace/${String(i + 1).padStart(10, "0")}`));
	}, 60000);

	it("a finished build's trace becomes one object with the same bytes; appends go on after it; a read under the compaction lists again", async () => {
		let text = "";
		for (let i = 0; i < 30; i++) {
			const line = `step ${i}\n`;
			text += line;
			await store.appendTrace(22, 1, line);
		}
		const reading = await store.openObject(store.traceKey(22, 1), { start: 3, end: text.length - 1 });
		await store.settleTrace(22, 1);
		expect((await contents("22/1/trace/")).keys).toEqual(["22/1/trace/base-0000000030"]);
		// Opened before the compaction: its pieces are gone, and it reads the same bytes from the base.
		expect((await sent(reading)).toString()).toBe(text.slice(3));
		expect(await store.appendTrace(22, 1, "after\n")).toBe(text.length + 6);
		text += "after\n";
		expect((await contents("22/1/trace/")).keys).toEqual(["22/1/trace/0000000031", "22/1/trace/base-0000000030"]);
		expect((await sent(await store.openObject(store.traceKey(22, 1)))).toString()).toBe(text);
		expect((await sent(await store.openObject(store.traceKey(22, 1), { start: text.length - 8, end: text.length - 1 }))).toString()).toBe(text.slice(-8));
		await store.removeTrace(22, 1);
		expect((await contents("22/")).keys).toEqual([]);
		expect(await store.traceSize(22, 1)).toBe(0);
	}, 60000);

	it("a long run of appends is compacted while the build runs (the listing stays short)", async () => {
		const line = "x".repeat(100) + "\n";
		for (let i = 0; i < 205; i++) await store.appendTrace(23, 1, line);
		// The compaction runs in the background once 200 appends follow the base.
		const deadline = Date.now() + 30000;
		while (Date.now() < deadline && (await contents("23/1/trace/")).keys.length > 10) await new Promise(r => setTimeout(r, 100));
		expect((await contents("23/1/trace/")).keys.length).toBeLessThanOrEqual(10);
		expect((await sent(await store.openObject(store.traceKey(23, 1)))).toString()).toBe(line.repeat(205));
	}, 120000);
});

describe("the store as the services see it", () => {
	it("check() passes on a bucket it can use, and says what is wrong with one it cannot", async () => {
		await store.check();
		expect((await contents("probes/")).keys).toEqual([]);
		const missing = new S3ArtifactStore(server.settings("no-such-bucket-here"), MAX);
		await expect(missing.check()).rejects.toThrow(/^the artifacts bucket no-such-bucket-here \(ARTIFACTS_S3_BUCKET\) cannot be used: /);
		const wrongKey = new S3ArtifactStore(server.settings(bucket, { secretAccessKey: "wrong" }), MAX);
		await expect(wrongKey.check()).rejects.toThrow(/cannot be used/);
		missing.destroy();
		wrongKey.destroy();
	});

	it("keeps every object under its key prefix", async () => {
		const prefixed = new S3ArtifactStore(server.settings(bucket, { prefix: "deploy-a/" }), MAX);
		try {
			const pending = await prefixed.writeUpload({ projectId: 30, buildId: 1 }, body(Buffer.from("prefixed")));
			const { file } = await prefixed.commitUpload(30, 1, pending.upload);
			await prefixed.appendTrace(30, 1, "hi\n");
			expect((await contents("deploy-a/")).keys.sort()).toEqual([`deploy-a/30/1/${file}`, "deploy-a/30/1/trace/0000000001"]);
			expect((await sent(await prefixed.openObject(prefixed.artifactKey(30, 1, file)))).toString()).toBe("prefixed");
			expect(await store.openObject(store.artifactKey(30, 1, file))).toBeNull();
		} finally {
			prefixed.destroy();
		}
	});

	it("answers 503 while the server is away (said once in the log), and serves again once it is back", async () => {
		const pending = await store.writeUpload({ projectId: 40, buildId: 1 }, body(Buffer.from("still here")));
		const key = store.artifactKey(40, 1, (await store.commitUpload(40, 1, pending.upload)).file);
		await server.pause("SIGKILL");
		try {
			warnings.length = 0;
			await expect(store.openObject(key)).rejects.toMatchObject({ code: 503, data: { body: { message: "503 Service Unavailable" } } });
			await expect(store.appendTrace(40, 1, "x")).rejects.toMatchObject({ code: 503 });
			await expect(store.writeUpload({ projectId: 40, buildId: 2 }, body(Buffer.from("x")))).rejects.toMatchObject({ code: 503 });
			expect(warnings.filter(w => w.includes("is unavailable"))).toHaveLength(1);
		} finally {
			await server.resume();
		}
		expect((await sent(await store.openObject(key))).toString()).toBe("still here");
		expect(warnings.some(w => w.includes("answers again"))).toBe(true);
	}, 60000);
});
