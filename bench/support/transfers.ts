/**
 * What the artifacts scenarios share (bench/scenarios/04-artifacts.ts, 09-artifacts-s3.ts): a
 * large file of known bytes, and curl as the client. curl moves bytes over loopback several times
 * faster than a Node http client, so the client is not what is measured.
 */
import { spawn } from "child_process";
import crypto from "crypto";
import fs from "fs";
import { BENCH_INTERNAL_SECRET, type Stack } from "./stack";

const MiB = 1024 * 1024;

/** A file of `size` pseudo-random bytes (a seeded block, numbered per MiB so no two MiB are the same). */
export async function writeSource(file: string, size: number): Promise<void> {
	const block = crypto.createHash("sha512").update("bench-artifacts").digest();
	const mib = Buffer.alloc(MiB);
	for (let i = 0; i < MiB; i += block.length) block.copy(mib, i);
	const out = fs.createWriteStream(file);
	for (let sent = 0, n = 0; sent < size; sent += MiB, n++) {
		const chunk = Buffer.from(mib.subarray(0, Math.min(MiB, size - sent)));
		chunk.writeUInt32LE(n, 0);
		if (!out.write(chunk)) await new Promise<void>(r => out.once("drain", () => r()));
	}
	await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** curl with `args`; resolves with what `-w` printed and the seconds it took. */
export function curl(args: string[]): Promise<{ out: string; seconds: number }> {
	const started = process.hrtime.bigint();
	return new Promise((resolve, reject) => {
		const child = spawn("curl", ["-sS", ...args], { stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let err = "";
		child.stdout.on("data", c => (out += c));
		child.stderr.on("data", c => (err += c));
		child.on("error", reject);
		child.on("close", code => {
			if (code !== 0) return reject(new Error(`curl exited ${code}: ${err}`));
			resolve({ out, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
		});
	});
}

/** A build of a new project on `stack`, and its artifacts moved with curl through the gateway. */
export async function artifactsBuild(stack: Stack, name: string) {
	const project = (await stack.expect(201, "POST", "/projects", { json: { name } })).body as { id: number };
	await stack.waitForRoute(`/projects/${project.id}/builds`);
	const created = await fetch(`${stack.url}/internal/builds`, {
		method: "POST",
		headers: { "Gitlab-Shared-Secret": BENCH_INTERNAL_SECRET, "Content-Type": "application/json" },
		body: JSON.stringify({
			project_id: project.id,
			name: "bench",
			stage: "test",
			ref: "master",
			commit: {
				id: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
				message: "bench",
				author_name: "Bench",
				author_email: "b@example.com",
				created_at: "2016-01-01T00:00:00Z",
			},
		}),
	});
	if (created.status !== 201) throw new Error(`create build: HTTP ${created.status} ${await created.text()}`);
	const build = (await created.json()) as { id: number };
	const uploadUrl = `${stack.url}/internal/builds/${build.id}/artifacts?filename=bench.bin`;
	const downloadUrl = `${stack.url}/projects/${project.id}/builds/${build.id}/artifacts`;
	/** curl through the gateway, checking what `-w` prints; its seconds. */
	const transfer = async (args: string[], written: string, expected: string): Promise<number> => {
		const { out, seconds } = await curl([...args, "-o", "/dev/null", "-w", written]);
		if (out !== expected) throw new Error(`${args.includes("-T") ? "upload" : "download"}: ${out}`);
		return seconds;
	};
	return {
		projectId: project.id,
		buildId: build.id,
		/** `curl -T file` through the gateway; its seconds. */
		upload: (file: string, bytes: number) =>
			transfer(["-T", file, "-H", `Gitlab-Shared-Secret: ${BENCH_INTERNAL_SECRET}`, uploadUrl], "%{http_code} %{size_upload}", `200 ${bytes}`),
		/** `curl -o /dev/null` through the gateway; its seconds. */
		download: (bytes: number) => transfer(["-H", `PRIVATE-TOKEN: ${stack.rootToken}`, downloadUrl], "%{http_code} %{size_download}", `200 ${bytes}`),
	};
}
