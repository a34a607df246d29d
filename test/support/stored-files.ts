/**
 * What a test cluster's artifact store holds, seen from outside the services, whichever store it
 * runs on: the files under DATA_DIR/artifacts, or the objects of its S3 bucket (the e2e-s3 project,
 * test/support/cluster.ts). The artifacts and trace suites check the store through this, so that one
 * spec covers both.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import type { S3Objects } from "../../lib/builds/s3-objects";
import { filesUnder } from "./builds";

export interface StoredFiles {
	/** Which store: "filesystem" or "s3". */
	kind: "filesystem" | "s3";
	/** What the build has in the store: `artifacts-…` files and its trace (`trace.log`, or `trace/…` pieces in a bucket), sorted. */
	buildFiles(projectId: number, buildId: number): Promise<string[]>;
	/** Whether nothing of the build is left, its directory included. */
	buildGone(projectId: number, buildId: number): Promise<boolean>;
	/** Uploads being written or left unfinished: temporary files, or a bucket's markers and multipart uploads. */
	pendingUploads(): Promise<string[]>;
	/** `length` bytes at `start` of a stored artifacts file. */
	readRange(projectId: number, buildId: number, file: string, start: number, length: number): Promise<Buffer>;
	sha256(projectId: number, buildId: number, file: string): Promise<string>;
}

export function filesystemStore(dataDir: string): StoredFiles {
	const root = path.join(dataDir, "artifacts");
	const dir = (projectId: number, buildId: number) => path.join(root, String(projectId), String(buildId));
	return {
		kind: "filesystem",
		buildFiles: (projectId, buildId) => Promise.resolve(filesUnder(dir(projectId, buildId))),
		buildGone: (projectId, buildId) => Promise.resolve(!fs.existsSync(dir(projectId, buildId))),
		pendingUploads: () => Promise.resolve(filesUnder(path.join(root, ".tmp"))),
		async readRange(projectId, buildId, file, start, length) {
			const handle = await fs.promises.open(path.join(dir(projectId, buildId), file), "r");
			try {
				const buf = Buffer.alloc(length);
				const { bytesRead } = await handle.read(buf, 0, length, start);
				return buf.subarray(0, bytesRead);
			} finally {
				await handle.close();
			}
		},
		async sha256(projectId, buildId, file) {
			const hash = crypto.createHash("sha256");
			for await (const chunk of fs.createReadStream(path.join(dir(projectId, buildId), file), { highWaterMark: 1024 * 1024 }))
				hash.update(chunk as Buffer);
			return hash.digest("hex");
		},
	};
}

export function bucketStore(objects: S3Objects): StoredFiles {
	const prefix = (projectId: number, buildId: number) => `${projectId}/${buildId}/`;
	const buildFiles = async (projectId: number, buildId: number) => {
		const names: string[] = [];
		for await (const o of objects.list(prefix(projectId, buildId))) names.push(o.name.slice(prefix(projectId, buildId).length));
		return names.sort();
	};
	const body = async (projectId: number, buildId: number, file: string, range?: { start: number; end: number }) => {
		const got = await objects.get(`${prefix(projectId, buildId)}${file}`, range);
		if (!got) throw new Error(`no object ${prefix(projectId, buildId)}${file} in the bucket`);
		return got.body;
	};
	return {
		kind: "s3",
		buildFiles,
		buildGone: async (projectId, buildId) => (await buildFiles(projectId, buildId)).length === 0,
		async pendingUploads() {
			const pending: string[] = [];
			for await (const o of objects.list("uploads/")) pending.push(o.name);
			for await (const u of objects.listUploads()) pending.push(`multipart upload of ${u.name}`);
			return pending.sort();
		},
		async readRange(projectId, buildId, file, start, length) {
			const chunks: Buffer[] = [];
			for await (const chunk of await body(projectId, buildId, file, { start, end: start + length - 1 })) chunks.push(chunk as Buffer);
			return Buffer.concat(chunks);
		},
		async sha256(projectId, buildId, file) {
			const hash = crypto.createHash("sha256");
			for await (const chunk of await body(projectId, buildId, file)) hash.update(chunk as Buffer);
			return hash.digest("hex");
		},
	};
}
