/**
 * Upgrading a DATA_DIR written by the NeDB versions (lib/store/sqlite/nedb-import.ts): the
 * services started on a directory in the previous release's layout (`<name>.db`, one JSON
 * document per line with updates, deletions and index lines appended, a torn last line, and
 * `<name>.counters.db`) answer with its data, ids go on after the highest one, a build counter
 * left behind by a crash is rolled forward; the NeDB files are kept aside, the import happens once
 * (also when a start was cut between the import and the move), and refused documents are kept.
 * A NeDB file of several MiB whose read chunks end inside 2-, 3- and 4-byte characters comes over
 * byte for byte: every record equal, field by field, to what the NeDB version read from it.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { config } from "../../../../config";
import { seqKey, shaKey, statusKey } from "../../../../models/build";
import { Collection, type Doc } from "../../../../lib/store/collection";
import { NEDB_READ_CHUNK_BYTES } from "../../../../lib/store/sqlite/nedb-import";
import { NEDB_IMPORTED_DIR } from "../../../../lib/store/sqlite/sqlite-collection";
import AccountsService from "../../../../services/accounts.service";
import ApiService from "../../../../services/api.service";
import BuildsService from "../../../../services/builds.service";
import LabelsService from "../../../../services/labels.service";
import SnippetsService from "../../../../services/snippets.service";
import { startLocal, type LocalStack } from "../../../support/broker";
import { internalApi } from "../../../support/builds";

const AT = "2016-12-01T10:00:00.000Z";
let nextNedbId = 0;
/** A document as NeDB 3 wrote it: its fields, then its own `_id`. */
const line = (doc: Doc, _id = `nedb${String(++nextNedbId).padStart(12, "0")}`) => JSON.stringify({ ...doc, _id });
const indexLine = (fieldName: string, unique = false) => JSON.stringify({ $$indexCreated: { fieldName, unique, sparse: false } });
const write = (dir: string, file: string, lines: string[]) => fs.writeFileSync(path.join(dir, file), lines.join("\n"));

function label(id: number, title: string, color = "#428BCA"): Doc {
	const doc = { project_id: 1, title, color, description: null, priority: null, template: false, created_at: AT, updated_at: AT };
	return { ...doc, project_title: `1|${title}`, id };
}

function build(id: number, status: string): Doc {
	const sha = "a".repeat(40);
	const commit = { id: sha, short_id: sha.slice(0, 8), title: "Add", message: "Add", author_name: "Ada", author_email: "ada@example.com", created_at: AT };
	const fields = { project_id: 1, seq: id, name: "rspec", stage: "test", ref: "master", tag: false, status, coverage: null, commit };
	const times = { created_at: AT, started_at: null, finished_at: null, user_id: null, artifacts: null, erased_at: null, erased_by: null };
	return { ...fields, ...times, project_seq: seqKey(1, id), project_status: statusKey(1, status), project_sha: shaKey(1, sha), id };
}

/** The previous release's files for a project of root's with labels, builds and a snippet. */
function writeOldDataDir(dir: string): void {
	const project = { name: "old", path: "old", namespace: "root", path_with_namespace: "root/old", description: null, visibility_level: 0 };
	write(dir, "projects.db", [
		indexLine("id", true),
		line({ ...project, public_builds: true, creator_id: 1, created_at: AT, path_key: "root/old", name_key: "root/old", id: 1 }),
	]);
	write(dir, "projects.counters.db", [JSON.stringify({ _id: "projects", seq: 1 })]);
	write(dir, "members.db", [line({ project_id: 1, user_id: 1, access_level: 50, member_key: "1|1", created_at: AT, id: 1 })]);
	write(dir, "members.counters.db", [JSON.stringify({ _id: "members", seq: 1 })]);
	write(dir, "labels.db", [
		indexLine("id", true),
		indexLine("project_title"),
		line(label(1, "bug"), "label-1"),
		line(label(2, "feature"), "label-2"),
		line(label(3, "gone"), "label-3"),
		line(label(2, "feature", "#00FF00"), "label-2"),
		JSON.stringify({ $$deleted: true, _id: "label-3" }),
		'{"project_id":1,"title":"torn","col',
	]);
	// Id 4 was handed out and never stored.
	write(dir, "labels.counters.db", [JSON.stringify({ _id: "labels", seq: 3 }), JSON.stringify({ _id: "labels", seq: 4 })]);
	const statuses = ["success", "failed", "running", "success", "running"];
	write(
		dir,
		"builds.db",
		statuses.map((s, i) => line(build(i + 1, s))),
	);
	write(dir, "builds.counters.db", [JSON.stringify({ _id: "builds", seq: 5 })]);
	// A crash after build 5 was stored and before the counter moved.
	write(dir, "build_counters.db", [line({ id: 1, seq: 4 })]);
	const snippet = { project_id: 1, title: "notes", file_name: "notes.md", content: "# kept", visibility_level: 0, author_id: 1, expires_at: null };
	fs.writeFileSync(path.join(dir, "snippets.db"), largeSnippetsFile(line({ ...snippet, created_at: AT, updated_at: AT, id: 1 })));
}

/** The characters whose bytes a read chunk's end cuts, in turn: 2, 3 and 4 bytes long. */
const CUT = ["é", "€", "𝄞", "ж", "漢", "😀"];
const BOUNDARIES = CUT.length;

/**
 * A snippets.db of several MiB (after `first`): snippets of ~200 KB of mixed text, one of them
 * updated, one deleted, and each multiple of the read chunk falling inside a character of CUT,
 * 2, 3 and 4 bytes long in turn (a title padded with ASCII moves the content's bytes into place).
 */
function largeSnippetsFile(first: string): Buffer {
	const parts: Buffer[] = [Buffer.from(first + "\n")];
	let size = parts[0].length;
	const add = (text: string) => {
		const b = Buffer.from(text + "\n");
		parts.push(b);
		size += b.length;
	};
	const doc = (id: number, pad: string, content: string) =>
		line(
			{
				project_id: 1,
				title: `größe ${id}${pad}`,
				file_name: `notes-${id}.md`,
				content,
				visibility_level: 0,
				author_id: 1,
				expires_at: null,
				created_at: AT,
				updated_at: AT,
				id,
			},
			`snippet-${id}`,
		);
	let id = 1;
	for (let cut = 0; cut < BOUNDARIES; cut++) {
		const boundary = (cut + 1) * NEDB_READ_CHUNK_BYTES;
		const char = CUT[cut];
		const width = Buffer.byteLength(char);
		// Mixed snippets up to the line that crosses the boundary.
		for (;;) {
			const content = `# ${id + 1} ünïcödé\n` + "€uro ✓ naïve 🚀 ".repeat(9000);
			if (size + Buffer.byteLength(doc(id + 1, "", content)) + 1 >= boundary) break;
			add(doc(++id, "", content));
		}
		// The crossing line: its content a run of `char` that the boundary lands in, one byte past a character's start.
		const run = char.repeat(Math.ceil((boundary - size) / width) + 2000);
		const prefix = (pad: string) => {
			const text = doc(id + 1, pad, run);
			return size + Buffer.byteLength(text.slice(0, text.indexOf('"content":"') + '"content":"'.length));
		};
		let pad = "";
		while ((boundary - prefix(pad)) % width !== 1) pad += "x";
		add(doc(++id, pad, run));
	}
	// An update and a deletion after everything, as NeDB appends them.
	add(doc(2, "", "replaced: ü€𝄞"));
	add(JSON.stringify({ $$deleted: true, _id: "snippet-3" }));
	return Buffer.concat(parts);
}

const sha256 = (text: string) => crypto.createHash("sha256").update(text).digest("hex");

/** The documents as the NeDB version read them: the whole file decoded at once, the last line of each `_id` kept. */
function readAsNedbDid(file: Buffer): Doc[] {
	const byId = new Map<string, Doc>();
	for (const text of file.toString("utf8").split("\n")) {
		if (!text.trim()) continue;
		const doc = JSON.parse(text) as Doc;
		if (doc.$$deleted) byId.delete(doc._id as string);
		else byId.set(doc._id as string, doc);
	}
	return [...byId.values()].map(({ _id, ...doc }) => doc).sort((a, b) => a.id - b.id);
}

describe("services on a DATA_DIR of the NeDB version", () => {
	let stack: LocalStack;
	const files = ["projects", "members", "labels", "builds", "build_counters", "snippets"];

	let snippetsFile: Buffer;

	beforeAll(async () => {
		writeOldDataDir(config.dataDir);
		snippetsFile = fs.readFileSync(path.join(config.dataDir, "snippets.db"));
		stack = await startLocal([ApiService, AccountsService, LabelsService, BuildsService, SnippetsService]);
	});
	afterAll(() => stack?.stop());

	it("answer with its data, its last state, and ids that go on after the highest", async () => {
		const labels = await stack.api().get("/projects/1/labels");
		expect(labels.status).toBe(200);
		expect(labels.body.map((l: Doc) => [l.id, l.name, l.color])).toEqual([
			[1, "bug", "#428BCA"],
			[2, "feature", "#00FF00"],
		]);
		expect((await stack.api().post("/projects/1/labels", { body: { name: "new", color: "#FFFFFF" } })).status).toBe(200);
		// Id 4 was handed out by the NeDB version: the next one is 5.
		expect((await stack.api().get("/projects/1/labels")).body.map((l: Doc) => [l.id, l.name])).toEqual([
			[1, "bug"],
			[2, "feature"],
			[5, "new"],
		]);
		const snippet = await stack.api().get("/projects/1/snippets/1/raw");
		expect([snippet.status, snippet.text]).toEqual([200, "# kept"]);
	});

	it("lists the builds exact: the counter a crash left behind rolled forward, X-Total and a scope's count", async () => {
		const all = await stack.api().get("/projects/1/builds");
		expect(all.status).toBe(200);
		expect(all.headers.get("x-total")).toBe("5");
		expect(all.body.map((b: Doc) => b.id)).toEqual([5, 4, 3, 2, 1]);
		const running = await stack.api().get("/projects/1/builds", { query: { scope: "running" } });
		expect([running.headers.get("x-total"), running.body.map((b: Doc) => b.id)]).toEqual(["2", [5, 3]]);
		const made = await internalApi(stack.url, config.internalApiSecret).create({ project_id: 1 });
		expect(made.status).toBe(201);
		expect(made.body.id).toBe(6);
		expect((await stack.api().get("/projects/1/builds")).headers.get("x-total")).toBe("6");
	});

	it("brings a NeDB file of several MiB over byte for byte, its read chunks ending inside 2-, 3- and 4-byte characters", async () => {
		// The file is what it says: every chunk boundary inside a character, of each width.
		const cut = Array.from({ length: BOUNDARIES }, (_, k) => {
			const at = (k + 1) * NEDB_READ_CHUNK_BYTES;
			let start = at;
			while ((snippetsFile[start] & 0xc0) === 0x80) start--;
			const lead = snippetsFile[start];
			const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
			return { bytesBefore: at - start, char: snippetsFile.subarray(start, start + width).toString("utf8") };
		});
		expect(cut).toEqual(CUT.map(char => ({ bytesBefore: 1, char })));
		expect(snippetsFile.length).toBeGreaterThan(BOUNDARIES * NEDB_READ_CHUNK_BYTES);

		const served = readAsNedbDid(snippetsFile);
		const snippets = new Collection("snippets", {}, { dataDir: config.dataDir, mongoUri: "" });
		await snippets.connect(stack.broker);
		const stored = await snippets.find({}, { sort: "id" });
		await snippets.disconnect();
		// Field by field; the long contents as their length and digest, so that a difference reads in a line.
		const fields = (doc: Doc) => ({ ...doc, content: `${Buffer.byteLength(doc.content as string)} bytes, sha256 ${sha256(doc.content as string)}` });
		expect(stored.map(fields)).toEqual(served.map(fields));
		for (const doc of served) {
			const raw = await fetch(`${stack.url}/projects/1/snippets/${doc.id}/raw`, { headers: { "PRIVATE-TOKEN": stack.rootToken } });
			expect({ id: doc.id, status: raw.status, same: Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(doc.content as string)) }).toEqual({
				id: doc.id,
				status: 200,
				same: true,
			});
		}
	});

	it("keeps the NeDB files aside, untouched", () => {
		const aside = path.join(config.dataDir, NEDB_IMPORTED_DIR);
		for (const name of files) {
			expect(fs.existsSync(path.join(config.dataDir, `${name}.db`))).toBe(false);
			expect(fs.readFileSync(path.join(aside, `${name}.db`), "utf8").length).toBeGreaterThan(0);
		}
		expect(fs.readFileSync(path.join(aside, "labels.db"), "utf8")).toContain('"$$deleted":true');
		expect(fs.existsSync(path.join(aside, "labels.counters.db"))).toBe(true);
	});
});

describe("the import of one collection", () => {
	const broker = new ServiceBroker({ logger: false });
	afterAll(() => broker.stop());
	const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), "glv3-nedb-import-"));
	const open = async (dataDir: string) => {
		const c = new Collection("labels", { indexes: [{ fields: { project_title: 1 }, unique: true }] }, { dataDir, mongoUri: "" });
		await c.connect(broker);
		return c;
	};

	it("keeps the documents the store refuses (a repeated id or key, as two NeDB processes could write) in a conflicts file", async () => {
		const dir = fresh();
		write(dir, "labels.db", [line(label(1, "bug")), line(label(2, "bug")), line(label(2, "other")), line(label(3, "third"))]);
		const c = await open(dir);
		expect((await c.find({}, { sort: "id" })).map(d => [d.id, d.title])).toEqual([
			[1, "bug"],
			[2, "other"],
			[3, "third"],
		]);
		expect(await c.nextId()).toBe(4);
		const conflicts = fs
			.readFileSync(path.join(dir, NEDB_IMPORTED_DIR, "labels.conflicts.db"), "utf8")
			.trim()
			.split("\n");
		expect(conflicts.map(l => (JSON.parse(l) as Doc).title)).toEqual(["bug"]);
		await c.disconnect();
	});

	it("happens once: files found again after an import (a start cut before the move) are moved aside, not imported twice", async () => {
		const dir = fresh();
		const lines = [line(label(1, "bug")), line(label(2, "feature"))];
		write(dir, "labels.db", lines);
		const c = await open(dir);
		await c.insert({ ...label(0, "later"), id: undefined });
		await c.disconnect();
		write(dir, "labels.db", lines);
		const again = await open(dir);
		expect((await again.find({}, { sort: "id" })).map(d => d.title)).toEqual(["bug", "feature", "later"]);
		expect(fs.existsSync(path.join(dir, "labels.db"))).toBe(false);
		await again.disconnect();
	});

	it("refuses to start over a NeDB file when the store already holds that collection's data", async () => {
		const dir = fresh();
		const c = await open(dir);
		await c.insert({ ...label(0, "new"), id: undefined });
		await c.disconnect();
		write(dir, "labels.db", [line(label(1, "bug"))]);
		await expect(open(dir)).rejects.toThrow(`${path.join(dir, "labels.db")} is a NeDB file of a collection the store already holds data for`);
	});
});
