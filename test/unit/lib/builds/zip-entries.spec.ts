/** One file out of an archive (lib/builds/zip-entries.ts): found by its exact path, whole or a range, stored or deflated. */
import fs from "fs";
import os from "os";
import path from "path";
import type { Readable } from "stream";
import { openForRandomAccess } from "../../../../lib/builds/file-streams";
import { entryPath, openArchive } from "../../../../lib/builds/zip-entries";
import { storedZip } from "../../../../scripts/zip";
import { deflatedZip } from "../../../support/zips";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zip-entries-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const read = async (stream: Readable) => Buffer.concat(await stream.toArray()).toString();
async function archiveOf(bytes: Buffer) {
	const file = path.join(dir, `${Math.random()}.zip`);
	fs.writeFileSync(file, bytes);
	return openArchive((await openForRandomAccess(file))!);
}

it("takes a path without NUL, leading slashes dropped", () => {
	expect(entryPath("dir/a b.txt")).toBe("dir/a b.txt");
	expect(entryPath("/x")).toBe("x");
	for (const bad of ["", "/", "a\0b", 7, "x".repeat(4097)]) expect(entryPath(bad)).toBeNull();
});

it("finds a stored entry by its exact path and reads it whole or in part", async () => {
	const zip = storedZip([
		{ name: "a.txt", data: Buffer.from("first") },
		{ name: "dir/b.txt", data: Buffer.from("0123456789") },
	]);
	const other = await archiveOf(zip);
	expect(await other.find("b.txt")).toBeNull();
	other.close();
	const archive = await archiveOf(zip);
	try {
		const entry = (await archive.find("dir/b.txt"))!;
		expect(entry.size).toBe(10);
		expect(await read(await entry.open())).toBe("0123456789");
		expect(await read(await entry.open({ start: 3, end: 5 }))).toBe("345");
	} finally {
		archive.close();
	}
});

it("inflates a deflated entry, and cuts a range out of it", async () => {
	const text = "abcdefghij".repeat(10000);
	const archive = await archiveOf(await deflatedZip({ "t.txt": text }));
	try {
		const entry = (await archive.find("t.txt"))!;
		expect(entry.size).toBe(text.length);
		expect(await read(await entry.open())).toBe(text);
		expect(await read(await entry.open({ start: 50001, end: 50012 }))).toBe(text.slice(50001, 50013));
	} finally {
		archive.close();
	}
});

it("refuses a file that is not an archive, and closes it", async () => {
	await expect(archiveOf(Buffer.from("not a zip at all"))).rejects.toThrow();
});
