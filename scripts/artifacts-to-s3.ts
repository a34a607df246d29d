/**
 * `npm run artifacts:to-s3`: copies the filesystem artifact store (DATA_DIR/artifacts) into the S3
 * bucket that ARTIFACTS_S3_* names, every artifacts file and trace under the keys the S3 store
 * reads them by (lib/builds/s3-import.ts). Interrupted, it is run again: what the bucket has whole
 * is left. It copies and never removes; the files stay until the operator removes them.
 * How to move a running deployment: docs/operations.md#moving-artifacts-to-s3.
 *
 *   ARTIFACTS_S3_BUCKET=gitlab-artifacts ARTIFACTS_S3_ENDPOINT=https://s3.example.com \
 *   ARTIFACTS_S3_ACCESS_KEY_ID=… ARTIFACTS_S3_SECRET_ACCESS_KEY=… DATA_DIR=/data npm run artifacts:to-s3
 */
import { config } from "../config";
import { MAX_TRACE_BYTES } from "../lib/builds/artifact-storage";
import { S3ArtifactStore } from "../lib/builds/s3-artifact-store";
import { importFilesystemStore } from "../lib/builds/s3-import";

async function main(): Promise<number> {
	if (!config.s3.bucket) {
		console.error(
			"artifacts:to-s3: set ARTIFACTS_S3_BUCKET (and the other ARTIFACTS_S3_* settings, docs/configuration.md#artifacts) to the bucket to copy into.",
		);
		return 2;
	}
	const store = new S3ArtifactStore(config.s3, config.maxArtifactBytes, { warn: (...args: unknown[]) => console.error(...args) }, MAX_TRACE_BYTES);
	try {
		await store.check();
		const where = `${config.s3.endpoint || "AWS"} bucket ${config.s3.bucket}${config.s3.prefix ? ` under ${config.s3.prefix}` : ""}`;
		console.error(`Copying the artifacts and traces of ${config.artifactsDir} into the ${where} …`);
		const report = await importFilesystemStore(config.artifactsDir, store, line => console.error(line));
		for (const line of report.kept) console.error(`kept ${line}`);
		for (const line of report.failed) console.error(`FAILED ${line}`);
		console.log(
			`Copied ${report.copied} file(s) (${report.bytes} bytes); ${report.present} were in the bucket already; ` +
				`${report.kept.length} trace(s) kept as the bucket has them; ${report.failed.length} failed.`,
		);
		if (report.failed.length) console.log("Run it again once the cause is mended: what was copied is not copied again.");
		return report.failed.length ? 1 : 0;
	} finally {
		store.destroy();
	}
}

if (require.main === module) {
	main().then(
		code => process.exit(code),
		err => {
			console.error(`artifacts:to-s3 failed: ${(err as Error).message}`);
			process.exit(1);
		},
	);
}
