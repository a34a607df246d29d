/**
 * Tests mirror the source (test/README.md#where-each-source-file-is-tested): every source file
 * under the mirrored folders has a spec of its name, or a line in test/README.md naming the specs
 * that cover it; every spec such a line names exists, and so does every file it lists. A unit spec
 * named after a source file sits at that file's path under test/unit.
 */
import fs from "fs";
import path from "path";

const ROOT = path.join(__dirname, "../..");
const MIRRORED = ["lib", "gateway", "mixins", "middlewares", "presenters"];
/** A role suffix a spec's name may leave out: middlewares/health.middleware.ts → health.spec.ts. */
const ROLE = /\.(middleware|mixin)$/;

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
	return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap(entry => {
		const rel = path.posix.join(dir, entry.name);
		if (entry.isDirectory()) return filesUnder(rel, keep);
		return keep(entry.name) ? [rel] : [];
	});
}

const sources = MIRRORED.flatMap(dir => filesUnder(dir, name => name.endsWith(".ts") && !name.endsWith(".d.ts")));
const specNames = new Set(filesUnder("test", name => name.endsWith(".spec.ts")).map(file => path.basename(file, ".spec.ts")));

/** test/README.md's lines "- `source`: specs…", as source → the specs it names. */
function readmeMap(): Map<string, string[]> {
	const map = new Map<string, string[]>();
	for (const line of fs.readFileSync(path.join(ROOT, "test/README.md"), "utf8").split("\n")) {
		const entry = /^- `([^`]+\.ts)`: (.*)$/.exec(line);
		if (entry) map.set(entry[1], entry[2].match(/test\/[\w./-]+\.spec\.ts/g) ?? []);
	}
	return map;
}

const hasOwnSpec = (file: string) => {
	const name = path.basename(file, ".ts");
	return specNames.has(name) || specNames.has(name.replace(ROLE, ""));
};

describe("tests mirror the source", () => {
	const listed = readmeMap();

	it("finds the source files and the README's map", () => {
		expect(sources).toContain("lib/builds/build-state.ts");
		expect(listed.size).toBeGreaterThan(0);
	});

	it("gives every source file a spec of its name or a line in test/README.md", () => {
		expect(sources.filter(file => !hasOwnSpec(file) && !listed.has(file))).toEqual([]);
	});

	it("keeps a unit spec named after a source file at that file's path under test/unit", () => {
		const unitSpecs = filesUnder("test/unit", name => name.endsWith(".spec.ts"));
		const misplaced = unitSpecs.flatMap(spec => {
			const name = path.basename(spec, ".spec.ts");
			const named = sources.filter(file => [name, `${name}.middleware`, `${name}.mixin`].includes(path.basename(file, ".ts")));
			if (named.length !== 1) return [];
			const mirrored = path.posix.join("test/unit", path.dirname(named[0]), `${name}.spec.ts`);
			return spec === mirrored ? [] : [`${spec} should be ${mirrored}`];
		});
		expect(misplaced).toEqual([]);
	});

	it("lists only files that exist, each with at least one spec that exists", () => {
		const wrong = [...listed].flatMap(([file, specs]) => [
			...(fs.existsSync(path.join(ROOT, file)) ? [] : [`${file} does not exist`]),
			...(specs.length ? [] : [`${file} names no spec`]),
			...specs.filter(spec => !fs.existsSync(path.join(ROOT, spec))).map(spec => `${file}: ${spec} does not exist`),
		]);
		expect(wrong).toEqual([]);
	});
});
