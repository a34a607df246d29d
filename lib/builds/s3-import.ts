/**
 * Moves a filesystem artifact store (DATA_DIR/artifacts) into an S3 bucket: every artifacts file
 * under its key, every trace as its base (`npm run artifacts:to-s3`, scripts/artifacts-to-s3.ts;
 * docs/operations.md#moving-artifacts-to-s3). Each object appears only once it is whole and is checked
 * against the file's size, and what the bucket has whole already is left, so a run that was
 * interrupted is simply run again. Uploads in progress (`.tmp/`) are not copied. The files are
 * left in place: the operator removes them once the service runs on the bucket.
 */
import fs from "fs";
import path from "path";
import { STORED_NAME, TRACE_FILE } from "./artifact-storage";
import type { S3ArtifactStore } from "./s3-artifact-store";

const ID = /^[1-9][0-9]{0,15}$/;
/** Files copied at once. */
const CONCURRENCY = 4;

export interface ImportReport {
	/** Files copied by this run, and their bytes. */
	copied: number;
	bytes: number;
	/** Files the bucket had whole already. */
	present: number;
	/** Traces left as the bucket has them (it has appends of its own), with why. */
	kept: string[];
	/** Files that could not be copied, with the error; run again once the cause is mended. */
	failed: string[];
}

interface Found {
	projectId: number;
	buildId: number;
	name: string;
	file: string;
	size: number;
}

/** Every artifacts file and trace under `root`, in project and build order. */
async function storedFiles(root: string): Promise<Found[]> {
	const found: Found[] = [];
	const dirs = async (dir: string) => (await fs.promises.readdir(dir, { withFileTypes: true })).filter(e => e.isDirectory() && ID.test(e.name));
	for (const project of await dirs(root))
		for (const build of await dirs(path.join(root, project.name)))
			for (const entry of await fs.promises.readdir(path.join(root, project.name, build.name), { withFileTypes: true })) {
				if (!entry.isFile() || !(STORED_NAME.test(entry.name) || entry.name === TRACE_FILE)) continue;
				const file = path.join(root, project.name, build.name, entry.name);
				found.push({ projectId: Number(project.name), buildId: Number(build.name), name: entry.name, file, size: (await fs.promises.stat(file)).size });
			}
	return found.sort((a, b) => a.projectId - b.projectId || a.buildId - b.buildId || a.name.localeCompare(b.name));
}

export async function importFilesystemStore(root: string, store: S3ArtifactStore, log: (line: string) => void = () => {}): Promise<ImportReport> {
	const report: ImportReport = { copied: 0, bytes: 0, present: 0, kept: [], failed: [] };
	const files = fs.existsSync(root) ? await storedFiles(root) : [];
	log(`${files.length} file(s) under ${root}`);
	let next = 0;
	const copyOne = async (f: Found) => {
		const open = () => fs.createReadStream(f.file, { highWaterMark: 1024 * 1024 });
		const what = `${f.projectId}/${f.buildId}/${f.name}`;
		try {
			const outcome =
				f.name === TRACE_FILE
					? await store.traces.importFile(f.projectId, f.buildId, f.size, open)
					: await store.importArtifact(f.projectId, f.buildId, f.name, f.size, open);
			if (outcome === "copied") {
				report.copied++;
				report.bytes += f.size;
				log(`copied ${what} (${f.size} bytes)`);
			} else if (outcome === "present") report.present++;
			else report.kept.push(`${what}: the bucket's trace has appends of its own, left as it is`);
		} catch (err) {
			report.failed.push(`${what}: ${(err as { cause?: Error }).cause?.message ?? (err as Error).message}`);
		}
	};
	await Promise.all(
		Array.from({ length: CONCURRENCY }, async () => {
			while (next < files.length) await copyOne(files[next++]);
		}),
	);
	return report;
}
