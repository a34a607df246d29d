/**
 * The Mongo-style query subset on the embedded store (lib/store/sqlite/query.ts): what each
 * operator selects on a real SQLite table, MongoDB's rules where they differ from SQL's (missing
 * fields, types), the declared indexes serving the services' queries, and refusals of anything
 * outside the subset.
 */
import { UnsupportedQuery, orderSql, whereSql } from "../../../../../lib/store/sqlite/query";
import { memoryTable } from "../../../../support/sqlite-table";

const docs = [
	{ id: 1, project_id: 1, title: "bug", status: "pending", archived: false, note: "Alpha" },
	{ id: 2, project_id: 1, title: "feature", status: "running", archived: true, tags: { a: 1 } },
	{ id: 3, project_id: 2, title: "Bug", status: "failed", note: null },
	{ id: 4, project_id: 2, title: "12", status: "success", artifacts: { file: "x.zip" } },
	{ id: 5, project_id: "2", title: "docs", status: "success", level: 20 },
	{ id: 6, project_id: 3, title: "zeta", level: 0 },
];
const table = memoryTable(docs, [{ fields: { project_id: 1, title: 1 } }, { fields: { status: 1, id: -1 }, counted: true }]);
const ids = (query: object, sort?: string[]) => table.find(query, sort).map(d => d.id);

describe("equality", () => {
	it("matches a value of the same type only", () => {
		expect(ids({ project_id: 2 })).toEqual([3, 4]);
		expect(ids({ project_id: "2" })).toEqual([5]);
		expect(ids({ title: "12" })).toEqual([4]);
		expect(ids({ title: 12 })).toEqual([]);
	});

	it("null matches a missing field and a stored null; booleans match booleans", () => {
		expect(ids({ note: null })).toEqual([2, 3, 4, 5, 6]);
		expect(ids({ archived: true })).toEqual([2]);
		expect(ids({ archived: false })).toEqual([1]);
		expect(ids({ level: 0 })).toEqual([6]);
	});

	it("reaches into embedded documents by dotted path, and combines fields with AND", () => {
		expect(ids({ "artifacts.file": "x.zip" })).toEqual([4]);
		expect(ids({ artifacts: null, project_id: 2 })).toEqual([3]);
		expect(ids({ id: 4, project_id: 2 })).toEqual([4]);
		expect(ids({})).toEqual([1, 2, 3, 4, 5, 6]);
	});
});

describe("operators", () => {
	it("$ne and $nin also match documents without the field", () => {
		expect(ids({ archived: { $ne: true } })).toEqual([1, 3, 4, 5, 6]);
		expect(ids({ status: { $ne: "success" } })).toEqual([1, 2, 3, 6]);
		expect(ids({ note: { $ne: null } })).toEqual([1]);
		expect(ids({ status: { $nin: ["success", "pending"] } })).toEqual([2, 3, 6]);
		expect(ids({ status: { $nin: ["success", null] } })).toEqual([1, 2, 3]);
	});

	it("$in takes values of any type, null for missing, and an empty list matches nothing", () => {
		expect(ids({ status: { $in: ["running", "failed"] } })).toEqual([2, 3]);
		expect(ids({ project_id: { $in: [1, "2"] } })).toEqual([1, 2, 5]);
		expect(ids({ status: { $in: [null, "pending"] } })).toEqual([1, 6]);
		expect(ids({ archived: { $in: [true] } })).toEqual([2]);
		expect(ids({ id: { $in: [] } })).toEqual([]);
	});

	it("ranges keep numbers and strings apart, as MongoDB does", () => {
		expect(ids({ level: { $gte: 0 } })).toEqual([5, 6]);
		expect(ids({ project_id: { $gt: 1 } })).toEqual([3, 4, 6]);
		expect(ids({ title: { $lt: "c" } })).toEqual([1, 3, 4]);
		expect(ids({ title: { $gte: "bug", $lt: "bug~" } })).toEqual([1]);
		expect(ids({ id: { $gt: 2, $lte: 4 } })).toEqual([3, 4]);
	});

	it("$or, $and, $exists and regular expressions (strings only, flags kept)", () => {
		expect(ids({ $or: [{ status: "failed" }, { level: { $gte: 10 } }] })).toEqual([3, 5]);
		expect(ids({ $and: [{ project_id: 2 }, { status: { $ne: "failed" } }] })).toEqual([4]);
		expect(ids({ note: { $exists: true } })).toEqual([1, 3]);
		expect(ids({ tags: { $exists: false }, project_id: 1 })).toEqual([1]);
		expect(ids({ title: /^bug$/i })).toEqual([1, 3]);
		expect(ids({ title: { $regex: "^b" } })).toEqual([1]);
		expect(ids({ title: { $regex: "^B", $options: "i" } })).toEqual([1, 3]);
		expect(ids({ project_id: /2/ })).toEqual([5]);
	});
});

it("sorts by several fields in either direction", () => {
	expect(ids({}, ["project_id", "-id"])).toEqual([2, 1, 4, 3, 6, 5]);
	expect(ids({ project_id: 1 }, ["-title"])).toEqual([2, 1]);
	expect(orderSql(undefined)).toBe("");
});

it("the declared indexes serve equality, ranges and a page in index order", () => {
	expect(table.plan({ project_id: 2, title: "12" })).toMatch(/USING INDEX ix:docs:project_id:1,title:1 /);
	expect(table.plan({ status: "success" }, ["-id"])).toMatch(/USING (COVERING )?INDEX ix:docs:status:1,id:-1 /);
	expect(table.plan({ status: "success" }, ["-id"])).not.toMatch(/TEMP B-TREE/);
	expect(table.plan({ status: { $in: ["success", "failed"] } }, ["-id"])).toMatch(/USING (COVERING )?INDEX ix:docs:status:1,id:-1 /);
	expect(table.plan({ id: { $in: [1, 2] } })).toMatch(/INTEGER PRIMARY KEY/);
});

it("refuses what is outside the subset, and field names that are not plain paths", () => {
	expect(() => whereSql({ $where: "1" })).toThrow(UnsupportedQuery);
	expect(() => whereSql({ title: { $elemMatch: {} } })).toThrow(UnsupportedQuery);
	expect(() => whereSql({ tags: { a: 1 } })).toThrow(UnsupportedQuery);
	expect(() => whereSql({ "a'); DROP TABLE docs; --": 1 })).toThrow(UnsupportedQuery);
	expect(() => whereSql({ $or: [] })).toThrow(UnsupportedQuery);
	expect(() => whereSql({ id: { $in: 3 } })).toThrow(UnsupportedQuery);
	expect(() => orderSql(["-a b"])).toThrow(UnsupportedQuery);
});

it("a counted index keeps the number of documents per value through inserts, updates and deletes", () => {
	const counts = () =>
		Object.fromEntries(
			(
				table.db.prepare(`SELECT value, n FROM "docs__counts" WHERE field = 'status' AND n > 0 ORDER BY value`).all() as { value: string; n: number }[]
			).map(r => [r.value, r.n]),
		);
	expect(counts()).toEqual({ failed: 1, pending: 1, running: 1, success: 2 });
	table.db.prepare("UPDATE docs SET doc = json_set(doc, '$.status', 'success') WHERE id = 1").run();
	table.db.prepare("DELETE FROM docs WHERE id = 2").run();
	table.db.prepare('INSERT INTO docs (id, doc) VALUES (7, json(\'{"id":7,"status":"failed"}\'))').run();
	table.db.prepare("UPDATE docs SET doc = json_remove(doc, '$.status') WHERE id = 4").run();
	expect(counts()).toEqual({ failed: 2, success: 2 });
});
