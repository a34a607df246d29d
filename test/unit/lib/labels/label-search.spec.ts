import { labelSearch, searchWords } from "../../../../lib/labels/label-search";

/** What a condition keeps of a label, read as the store reads `$or`, `$and` and `$regex`. */
function matches(condition: Record<string, unknown>, label: Record<string, string | null>): boolean {
	if (Array.isArray(condition.$or)) return condition.$or.some(c => matches(c, label));
	if (Array.isArray(condition.$and)) return condition.$and.every(c => matches(c, label));
	const [field, rule] = Object.entries(condition)[0] as [string, { $regex: RegExp }];
	const value = label[field];
	return typeof value === "string" && rule.$regex.test(value);
}

const LABELS = [
	{ title: "needs review", description: null },
	{ title: "Reviewed", description: "done" },
	{ title: "bug", description: "Something is broken; needs a review" },
	{ title: "ui", description: null },
	{ title: "UI polish", description: "a.b*c" },
	{ title: "wontfix", description: "review later" },
];
const found = (text: string) => LABELS.filter(l => matches(labelSearch(text)!, l)).map(l => l.title);

describe("label search (GitLab's Label.search)", () => {
	it("finds a word anywhere in the title or the description, in any case", () => {
		expect(found("review")).toEqual(["needs review", "Reviewed", "bug", "wontfix"]);
		expect(found("REVIEWED")).toEqual(["Reviewed"]);
		expect(found("broken")).toEqual(["bug"]);
	});

	it("needs every word of three characters or more in the same field; shorter words are left out", () => {
		expect(found("needs review")).toEqual(["needs review", "bug"]);
		expect(found("review later")).toEqual(["wontfix"]);
		expect(found("needs a review")).toEqual(["needs review", "bug"]);
		expect(searchWords('  "needs review"  ui  x ')).toEqual(["needs review"]);
		expect(found('"a review"')).toEqual(["bug"]);
	});

	it("matches a text without such a word as a whole title or description only", () => {
		expect(found("ui")).toEqual(["ui"]);
		expect(found("UI")).toEqual(["ui"]);
		expect(found("u")).toEqual([]);
	});

	it("reads nothing in the text as a pattern", () => {
		expect(found("a.b*c")).toEqual(["UI polish"]);
		expect(found(".*")).toEqual([]);
		expect(found("(((")).toEqual([]);
	});

	it("asks nothing of a blank text", () => {
		expect(labelSearch(undefined)).toBeNull();
		expect(labelSearch("   ")).toBeNull();
	});
});
