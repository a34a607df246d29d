/**
 * The S3 server of a test file: versitygw (an S3 gateway over a directory, posix backend) started
 * here on a free loopback port with a scratch directory and its own keys, and a bucket made in it,
 * as test/support/mongo-server.ts starts FerretDB. VERSITYGW_BIN names the binary; by default the
 * one .ci/build-versitygw builds into the CI cache. A missing binary is an error that says how to
 * build it: tests never skip. It can be stopped and started again on the same port and directory
 * (a restart under downloads), and read with the same S3 client the service uses.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import type { S3Settings } from "../../config/artifacts";
import { S3Objects } from "../../lib/builds/s3-objects";
import { PEER_CACHE } from "./peer-cache";
import { listening } from "./private-servers";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";

export const VERSITYGW_BIN = process.env.VERSITYGW_BIN || path.join(PEER_CACHE, "bin/versitygw");

export class S3Server {
	private proc: ManagedProcess | null = null;

	private constructor(
		readonly port: number,
		/** The directory versitygw keeps the buckets in (one subdirectory each). */
		readonly dir: string,
		readonly accessKey: string,
		readonly secretKey: string,
	) {}

	/** A server of its own keys, or of the ones given (a deployment file's). */
	static async start(keys: { accessKey?: string; secretKey?: string } = {}): Promise<S3Server> {
		if (!fs.existsSync(VERSITYGW_BIN))
			throw new Error(
				`versitygw is not built at ${VERSITYGW_BIN} (VERSITYGW_BIN names another binary). ` +
					`Build it from its Go module (the version that script pins; needs Go; npm test does it) with:\n  bash .ci/build-versitygw`,
			);
		const server = new S3Server(
			await freePort(),
			fs.mkdtempSync(path.join(os.tmpdir(), "glv3-s3-")),
			keys.accessKey ?? "test-" + crypto.randomBytes(6).toString("hex"),
			keys.secretKey ?? crypto.randomBytes(24).toString("base64url"),
		);
		try {
			await server.resume();
		} catch (err) {
			fs.rmSync(server.dir, { recursive: true, force: true });
			throw err;
		}
		return server;
	}

	get endpoint(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	/** (Re)starts the server on its port and directory: what it held is there again. */
	async resume(): Promise<void> {
		this.proc = await startProcess({
			name: `versitygw:${this.port}`,
			command: VERSITYGW_BIN,
			args: ["--port", `127.0.0.1:${this.port}`, "--access", this.accessKey, "--secret", this.secretKey, "--quiet", "--keep-alive", "posix", this.dir],
			env: {},
			ready: () => listening(this.port),
			readyTimeoutMs: 20000,
			pollMs: 50,
		});
	}

	/** Stops the server (kill -9 with `signal`), keeping its directory for resume(). */
	async pause(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
		if (this.proc) await stopProcess(this.proc, signal, 5000);
		this.proc = null;
	}

	/** A new bucket; its name is unique to this server. */
	async createBucket(name = "artifacts-" + crypto.randomBytes(4).toString("hex")): Promise<string> {
		const client = new S3Client({
			endpoint: this.endpoint,
			region: "us-east-1",
			forcePathStyle: true,
			credentials: { accessKeyId: this.accessKey, secretAccessKey: this.secretKey },
		});
		try {
			await client.send(new CreateBucketCommand({ Bucket: name }));
		} finally {
			client.destroy();
		}
		return name;
	}

	/** The service's environment for a bucket of this server. */
	env(bucket: string, extra: Record<string, string> = {}): Record<string, string> {
		return {
			ARTIFACTS_STORE: "s3",
			ARTIFACTS_S3_ENDPOINT: this.endpoint,
			ARTIFACTS_S3_BUCKET: bucket,
			ARTIFACTS_S3_ACCESS_KEY_ID: this.accessKey,
			ARTIFACTS_S3_SECRET_ACCESS_KEY: this.secretKey,
			...extra,
		};
	}

	/** config/'s settings for a bucket of this server. */
	settings(bucket: string, overrides: Partial<S3Settings> = {}): S3Settings {
		return {
			endpoint: this.endpoint,
			region: "us-east-1",
			bucket,
			prefix: "",
			accessKeyId: this.accessKey,
			secretAccessKey: this.secretKey,
			forcePathStyle: true,
			proxyDownload: true,
			publicEndpoint: "",
			...overrides,
		};
	}

	/** The bucket through the service's own client, to see what is in it. */
	objects(bucket: string, overrides: Partial<S3Settings> = {}): S3Objects {
		return new S3Objects(this.settings(bucket, overrides), 1024 ** 3);
	}

	async stop(): Promise<void> {
		await this.pause();
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}
