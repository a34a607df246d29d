/**
 * 9. Artifacts on S3 (docs/architecture.md#s3-store): gateway, accounts and builds as processes over
 * NATS, ARTIFACTS_STORE=s3 on a bucket of versitygw (the S3 server the tests run, built by
 * .ci/build-versitygw). Against baselines measured in the same run, on the same server and bytes:
 * - a download of a 1 GiB artifact through the gateway vs a plain GET of the same object from the
 *   same S3 server (curl with its own SigV4 signing);
 * - an upload of the same 1 GiB through the gateway vs the server's own upload of the same bytes
 *   (one PUT by curl), and for the record vs the S3 client's own streamed multipart upload;
 * - the S3 client the store is built on, @aws-sdk/client-s3 (+ lib-storage), against the other
 *   well-kept one, minio: a streamed GET, a streamed multipart upload with the same part size, and
 *   small ranged GETs (what an archive's entries and trace pieces cost): the measurement behind the
 *   choice (docs/architecture.md#s3-client).
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { Readable, Writable } from "stream";
import { pipeline } from "stream/promises";
import * as Minio from "minio";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import type { BenchContext, Row, Scenario } from "../scenario";
import { summarize } from "../support/stats";
import { artifactsBuild, curl, writeSource } from "../support/transfers";
import { PART_BYTES } from "../../lib/builds/s3-objects";
import { S3Server } from "../../test/support/s3-server";

const MiB = 1024 * 1024;
/** What the processes move before anything is measured. */
const WARM_UP = 64 * MiB;
/** Ranged GETs per client in the small-request comparison, and the size of each. */
const RANGED_GETS = 300;
const RANGE = 64 * 1024;

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** Reads a stream to its end, counting its bytes. */
async function drainCounting(body: Readable): Promise<number> {
	let bytes = 0;
	await pipeline(
		body,
		new Writable({
			write(chunk: Buffer, _enc, done) {
				bytes += chunk.length;
				done();
			},
		}),
	);
	return bytes;
}

const scenario: Scenario = {
	name: "artifacts on S3",
	description: "1 GiB through the gateway to and from an S3 bucket vs the same server's own GET and PUT of the bytes; @aws-sdk/client-s3 vs minio",
	timeLimitMinutes: 20,
	async run(ctx: BenchContext): Promise<Row[]> {
		const size = (ctx.quick ? 256 : 1024) * MiB;
		const rounds = ctx.quick ? 2 : 3;
		const s3 = await S3Server.start();
		ctx.defer(() => s3.stop());
		const bucket = await s3.createBucket();
		const objects = s3.objects(bucket);
		ctx.defer(() => objects.destroy());
		const stack = await ctx.startStack({
			nodes: { api: "api", accounts: "accounts", builds: "builds" },
			nats: true,
			redis: true,
			env: { ...s3.env(bucket), MAX_ARTIFACT_BYTES: String(size + MiB) },
		});
		const { projectId, buildId, upload, download } = await artifactsBuild(stack, "bench-artifacts-s3");
		/** The server's own SigV4 in curl (the body unsigned, as the SDK streams it too). */
		const signed = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", `${s3.accessKey}:${s3.secretKey}`, "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"];
		const objectUrl = (key: string) => `${s3.endpoint}/${bucket}/${key}`;

		const source = path.join(ctx.tmpDir, "source.bin");
		const warm = path.join(ctx.tmpDir, "warm.bin");
		await writeSource(source, size);
		await writeSource(warm, WARM_UP);
		ctx.log(`warming up with ${WARM_UP / MiB} MiB up and down`);
		await upload(warm, WARM_UP);
		await download(WARM_UP);

		ctx.log(`uploading ${size / MiB} MiB ${rounds} times through the gateway, with one PUT straight to the server, and with the SDK's multipart upload`);
		const up: number[] = [];
		const put: number[] = [];
		const multipart: number[] = [];
		for (let i = 0; i < rounds; i++) {
			up.push(size / MiB / (await upload(source, size)));
			const direct = await curl([...signed, "-T", source, "-o", "/dev/null", "-w", "%{http_code} %{size_upload}", objectUrl(`direct-${i}`)]);
			if (direct.out !== `200 ${size}`) throw new Error(`direct PUT: ${direct.out}`);
			put.push(size / MiB / direct.seconds);
			const started = process.hrtime.bigint();
			await objects.upload(`multipart-${i}`, fs.createReadStream(source, { highWaterMark: MiB }));
			multipart.push(size / MiB / seconds(started));
		}
		let stored = "";
		for await (const o of objects.list(`${projectId}/${buildId}/artifacts-`)) if (o.size === size) stored = o.name;
		if (!stored) throw new Error("the uploaded artifact is not in the bucket");

		ctx.log(`downloading ${rounds} times through the gateway, and with a plain GET of the same object`);
		const down: number[] = [];
		const get: number[] = [];
		for (let i = 0; i < rounds; i++) {
			down.push(size / MiB / (await download(size)));
			const direct = await curl([...signed, "-o", "/dev/null", "-w", "%{http_code} %{size_download}", objectUrl(stored)]);
			if (direct.out !== `200 ${size}`) throw new Error(`direct GET: ${direct.out}`);
			get.push(size / MiB / direct.seconds);
		}

		ctx.log("the S3 clients: @aws-sdk/client-s3 against minio, a streamed GET, a multipart upload, small ranged GETs");
		const minio = new Minio.Client({
			endPoint: "127.0.0.1",
			port: s3.port,
			useSSL: false,
			accessKey: s3.accessKey,
			secretKey: s3.secretKey,
			region: "us-east-1",
			pathStyle: true,
			partSize: PART_BYTES,
		});
		const sdkGet: number[] = [];
		const minioGet: number[] = [];
		const sdkPut: number[] = [];
		const minioPut: number[] = [];
		for (let i = 0; i < rounds; i++) {
			let started = process.hrtime.bigint();
			const got = await objects.client.send(new GetObjectCommand({ Bucket: bucket, Key: stored }));
			if ((await drainCounting(got.Body as Readable)) !== size) throw new Error("SDK GET: short");
			sdkGet.push(size / MiB / seconds(started));
			started = process.hrtime.bigint();
			if ((await drainCounting(await minio.getObject(bucket, stored))) !== size) throw new Error("minio GET: short");
			minioGet.push(size / MiB / seconds(started));
			started = process.hrtime.bigint();
			await objects.upload(`sdk-${i}`, fs.createReadStream(source, { highWaterMark: MiB }));
			sdkPut.push(size / MiB / seconds(started));
			started = process.hrtime.bigint();
			await minio.putObject(bucket, `minio-${i}`, fs.createReadStream(source, { highWaterMark: MiB }), size);
			minioPut.push(size / MiB / seconds(started));
		}
		const offsets = Array.from({ length: RANGED_GETS }, () => crypto.randomInt(0, size - RANGE));
		const sdkRanged: number[] = [];
		const minioRanged: number[] = [];
		for (const offset of offsets) {
			let started = process.hrtime.bigint();
			const got = await objects.client.send(new GetObjectCommand({ Bucket: bucket, Key: stored, Range: `bytes=${offset}-${offset + RANGE - 1}` }));
			if ((await drainCounting(got.Body as Readable)) !== RANGE) throw new Error("SDK ranged GET: short");
			sdkRanged.push(seconds(started) * 1000);
			started = process.hrtime.bigint();
			if ((await drainCounting(await minio.getPartialObject(bucket, stored, offset, RANGE))) !== RANGE) throw new Error("minio ranged GET: short");
			minioRanged.push(seconds(started) * 1000);
		}

		const file = `${size / MiB} MiB`;
		const extra = { rounds, server: "versitygw v1.8.0 (posix)", partMiB: PART_BYTES / MiB };
		/** A throughput row: MiB/s of `value` against `baselineValue`, the rounds' medians. */
		const rate = (what: string, value: number[], baseline: string, baselineValue: number[]): Row => ({
			case: what,
			metric: "MiB/s",
			value: summarize(value, rounds + 1),
			baseline,
			baselineValue: summarize(baselineValue, rounds + 1),
			better: "higher",
			extra,
		});
		const throughStack = "through the gateway (split, over NATS)";
		return [
			rate(`download ${file} from the bucket ${throughStack}, curl`, down, "plain GET of the same object from the same S3 server, curl", get),
			rate(`upload ${file} into the bucket ${throughStack}, curl -T`, up, "the same bytes in one PUT straight to the same S3 server, curl -T", put),
			// For the record: the store's own way of writing (streamed parts), without the gateway in front.
			rate(
				`upload ${file} into the bucket ${throughStack}, curl -T`,
				up,
				"the same bytes streamed straight to the server in parts by @aws-sdk/lib-storage",
				multipart,
			),
			rate(`GET ${file}, streamed, with @aws-sdk/client-s3`, sdkGet, "the same GET with minio 8", minioGet),
			rate(
				`multipart upload of ${file}, streamed, with @aws-sdk/lib-storage`,
				sdkPut,
				"the same upload with minio 8 putObject (same part size)",
				minioPut,
			),
			{
				case: `ranged GET of ${RANGE / 1024} KiB at a random offset, one at a time, with @aws-sdk/client-s3`,
				metric: "latency ms",
				value: summarize(sdkRanged),
				baseline: "the same GETs with minio 8 getPartialObject",
				baselineValue: summarize(minioRanged),
				better: "lower",
				extra: { requests: RANGED_GETS },
			},
		];
	},
};

export default scenario;
