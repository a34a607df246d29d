/** The seed's artifacts are real zip files: Info-ZIP's `unzip` lists, tests and extracts them byte for byte. */
import { spawnSync } from "child_process";
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { artifactBytes } from "../../../scripts/seed";
import { storedZip } from "../../../scripts/zip";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-zip-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const unzip = (...args: string[]) => spawnSync("unzip", args, { encoding: "buffer" });

it("writes archives that unzip lists, verifies and extracts unchanged", () => {
	const binary = crypto.randomBytes(5000);
	const file = path.join(dir, "a.zip");
	fs.writeFileSync(
		file,
		storedZip([
			{ name: "report.txt", data: Buffer.from("hello\n") },
			{ name: "coverage/ünïcode.bin", data: binary },
			{ name: "empty", data: Buffer.alloc(0) },
		]),
	);
	const list = unzip("-l", file);
	expect(list.status).toBe(0);
	expect(list.stdout.toString()).toMatch(
		/\s6\s+2017-01-01 00:00\s+report\.txt\n\s+5000\s+2017-01-01 00:00\s+coverage\/ünïcode\.bin\n\s+0\s+2017-01-01 00:00\s+empty\n/,
	);
	expect(unzip("-tq", file).stdout.toString()).toMatch(/No errors detected/);
	expect(unzip("-p", file, "coverage/ünïcode.bin").stdout.equals(binary)).toBe(true);
	expect(unzip("-p", file, "report.txt").stdout.toString()).toBe("hello\n");
});

it("the seed's artifacts are zips of the size asked for, with a non-ASCII byte", () => {
	const bytes = artifactBytes(65536, 7);
	expect(bytes.length).toBe(65536);
	expect(bytes.some(b => b > 0x7f)).toBe(true);
	const file = path.join(dir, "seed.zip");
	fs.writeFileSync(file, bytes);
	const list = unzip("-l", file);
	expect(list.status).toBe(0);
	expect(list.stdout.toString()).toContain("report.txt");
	expect(list.stdout.toString()).toContain("coverage/data.bin");
	expect(unzip("-p", file, "report.txt").stdout.toString()).toBe("Demo artifacts of seeded build 7\n");
});
