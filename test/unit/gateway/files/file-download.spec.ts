/**
 * The gateway's file answers (gateway/files/file-download.ts) over a real HTTP server and a real
 * artifact store: every way out of a download closes the stored file it opened, the ones that
 * send nothing of it (HEAD, 304, 416) and an unexpected failure included.
 */
import fs from "fs";
import http from "http";
import type { AddressInfo } from "net";
import os from "os";
import path from "path";
import { Readable } from "stream";
import { fileDownload } from "../../../../gateway/files/file-download";
import { ArtifactStore } from "../../../../lib/builds/artifact-store";
import type { DownloadGrant } from "../../../../lib/builds/transfer-grants";
import { openFiles } from "../../../support/open-files";

let root: string;
let store: ArtifactStore;
let server: http.Server;
let url: string;
let grant: DownloadGrant;

/** Open files of this process under the store's root. */
const openStoredFiles = () => openFiles(file => file.startsWith(root));

/** The downloads the server has run, each settled once it has closed what it opened. */
const downloads: Promise<void>[] = [];

/**
 * Open stored files once every download so far has finished: the client can hold the whole answer
 * a moment before the server's close of the file is done (seen with other suites running beside).
 */
async function openAfterDownloads(): Promise<number> {
	await Promise.all(downloads.splice(0));
	return openStoredFiles();
}

beforeAll(async () => {
	root = await fs.promises.mkdtemp(path.join(os.tmpdir(), "file-download-"));
	store = new ArtifactStore(root, 1024 * 1024);
	const stored = await store.writeArtifact(4, 5, Readable.from([Buffer.from("0123456789")]));
	const key = store.artifactKey(4, 5, stored.file);
	// The alias as moleculer-web calls it: on the gateway service (`this`), after the route's checks.
	const download = fileDownload("builds.grant") as unknown as (
		this: { artifactStore: ArtifactStore },
		req: http.IncomingMessage,
		res: http.ServerResponse,
		next: (err?: unknown) => void,
	) => Promise<void>;
	server = http.createServer((req, res) => {
		const request = Object.assign(req, { $ctx: { call: () => Promise.resolve(grant) }, $params: {} });
		const served = download.call({ artifactStore: store }, request, res, (err?: unknown) => {
			// The gateway's error handler writes an ApiError's own headers too; here its status is enough.
			const status = (err as { code?: unknown })?.code;
			res.writeHead(typeof status === "number" ? status : 500, { "Content-Type": "text/plain" });
			res.end(String((err as Error)?.message ?? err));
		});
		downloads.push(served);
	});
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
	grant = { key, size: 10, etag: '"e1"', contentType: "application/octet-stream", headers: {} };
});

beforeEach(() => {
	grant = { ...grant, headers: {} };
});

afterAll(async () => {
	await new Promise(resolve => server.close(resolve));
	await fs.promises.rm(root, { recursive: true, force: true });
});

async function request(headers: Record<string, string> = {}, method = "GET") {
	const res = await fetch(url, { method, headers });
	return { status: res.status, body: await res.text(), headers: res.headers };
}

describe("fileDownload closes the stored file on every way out", () => {
	it("after sending it whole or a range of it", async () => {
		expect(await request()).toMatchObject({ status: 200, body: "0123456789" });
		expect(await request({ Range: "bytes=2-4" })).toMatchObject({ status: 206, body: "234" });
		expect(await openAfterDownloads()).toBe(0);
	});

	it("after answers that send none of it: HEAD, 304 and 416", async () => {
		const head = await request({}, "HEAD");
		expect([head.status, head.body, head.headers.get("content-length")]).toEqual([200, "", "10"]);
		expect(await request({ "If-None-Match": '"e1"' })).toMatchObject({ status: 304, body: "" });
		expect((await request({ Range: "bytes=20-" })).status).toBe(416);
		expect(await openAfterDownloads()).toBe(0);
	});

	it("after a failure between opening it and sending it (a header that cannot be written)", async () => {
		grant = { ...grant, headers: { "Content-Disposition": "attachment\r\nX-Injected: 1" } };
		const res = await request();
		expect(res.status).toBe(500);
		expect(res.headers.get("x-injected")).toBeNull();
		expect(await openAfterDownloads()).toBe(0);
	});
});
