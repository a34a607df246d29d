/**
 * The MongoDB wire-protocol server of a test file: FerretDB (SQLite backend) started here on a
 * free loopback port with a scratch state directory, or the server TEST_MONGO_URL names (a real
 * MongoDB, for instance). FERRETDB_BIN names the binary; by default the one .ci/build-ferretdb
 * builds into the CI cache. A missing binary is an error that says how to build it: tests never skip.
 * What FerretDB does and does not do for this project: docs/storage.md#ferretdb.
 */
import fs from "fs";
import os from "os";
import path from "path";
import mongoose from "mongoose";
import { PEER_CACHE } from "./peer-cache";
import { listening } from "./private-servers";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";

export const FERRETDB_BIN = process.env.FERRETDB_BIN || path.join(PEER_CACHE, "bin/ferretdb");

export interface MongoServer {
	/** `mongodb://host:port`, without a database. */
	url: string;
	/** A connection string for one database of it. */
	database(name: string): string;
	stop(): Promise<void>;
}

function server(url: string, stop: () => Promise<void>): MongoServer {
	return { url, database: name => `${url}/${name}`, stop };
}

export async function startMongoServer(): Promise<MongoServer> {
	const given = process.env.TEST_MONGO_URL;
	if (given) return server(given.replace(/\/+$/, ""), () => Promise.resolve());
	if (!fs.existsSync(FERRETDB_BIN))
		throw new Error(
			`FerretDB is not built at ${FERRETDB_BIN} (FERRETDB_BIN names another binary, TEST_MONGO_URL another server). ` +
				`Build it from its Go module (the version that script pins; needs Go; \`npm test\` does it) with:\n  bash .ci/build-ferretdb`,
		);
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-ferretdb-"));
	const port = await freePort();
	let proc: ManagedProcess;
	try {
		proc = await startProcess({
			name: `ferretdb:${port}`,
			command: FERRETDB_BIN,
			args: [
				"--handler=sqlite",
				`--sqlite-url=file:${dir}/`,
				`--state-dir=${dir}`,
				`--listen-addr=127.0.0.1:${port}`,
				"--debug-addr=-",
				"--telemetry=disable",
				"--log-level=error",
			],
			env: {},
			ready: () => listening(port),
			readyTimeoutMs: 20000,
			pollMs: 50,
		});
	} catch (err) {
		fs.rmSync(dir, { recursive: true, force: true });
		throw err;
	}
	return server(`mongodb://127.0.0.1:${port}`, async () => {
		await stopProcess(proc, "SIGTERM", 5000);
		fs.rmSync(dir, { recursive: true, force: true });
	});
}

/** Drops a database (on a server the test did not start, its databases outlive the test). */
export async function dropDatabase(uri: string): Promise<void> {
	const conn = await mongoose.createConnection(uri, { serverSelectionTimeoutMS: 10000 }).asPromise();
	try {
		await conn.dropDatabase();
	} finally {
		await conn.close();
	}
}
