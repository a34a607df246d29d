/** A snippet's files (lib/snippets/snippet-files.ts) and v4's snippet entity (presenters/snippet.v4.ts). */
import { applyFileActions, checkFiles, filesOf, pathsOf, readCreateFiles, storedFiles } from "../../../../lib/snippets/snippet-files";
import type { SnippetDoc } from "../../../../models/snippet";
import { presentSnippetV4 } from "../../../../presenters/snippet.v4";

const error = (body: object) => expect.objectContaining({ code: 400, data: { body } });
const files = [
	{ path: "a.rb", content: "1" },
	{ path: "b.rb", content: "2" },
];

it("keeps the first file where v3 reads it and the rest beside it", () => {
	const stored = storedFiles(files);
	expect(stored).toEqual({ file_name: "a.rb", content: "1", file_paths: ["a.rb", "b.rb"], more_files: [{ path: "b.rb", content: "2" }] });
	expect(filesOf(stored)).toEqual(files);
	expect(filesOf({ file_name: "old", content: "x" })).toEqual([{ path: "old", content: "x" }]);
	expect(pathsOf({ file_name: "old" })).toEqual(["old"]);
});

it("reads a create's files from files[] (an array or a form's object) or content with file_name", () => {
	expect(readCreateFiles({ content: "x", file_name: "a" })).toEqual([{ path: "a", content: "x" }]);
	expect(readCreateFiles({ files: { 0: { file_path: "a", content: "x" } } })).toEqual([{ path: "a", content: "x" }]);
	expect(() => readCreateFiles({ files: "a" })).toThrow(error({ error: "files is invalid" }));
	expect(() => readCreateFiles({ files: [{ file_path: "a" }] })).toThrow(error({ error: "files[0][content] is missing" }));
});

it("applies an edit's actions in order, and names a path that is not there", () => {
	const after = applyFileActions(files, [
		{ action: "move", previous_path: "a.rb", file_path: "c.rb", content: "3" },
		{ action: "delete", file_path: "b.rb" },
		{ action: "create", file_path: "d.rb", content: "4" },
		{ action: "update", file_path: "d.rb", content: "5" },
	]);
	expect(after).toEqual([
		{ path: "c.rb", content: "3" },
		{ path: "d.rb", content: "5" },
	]);
	expect(files[0]).toEqual({ path: "a.rb", content: "1" });
	expect(() => applyFileActions(files, [{ action: "create", file_path: "a.rb", content: "x" }])).toThrow(
		error({ message: { files: ["a.rb already exists"] } }),
	);
	expect(() => applyFileActions(files, [{ action: "update", file_path: "z.rb", content: "x" }])).toThrow(
		error({ message: { files: ["z.rb is not a file of the snippet"] } }),
	);
	expect(() => applyFileActions(files, [{ file_path: "a.rb" }])).toThrow(error({ error: "files[0][action] is missing" }));
});

it("keeps one to ten files of sane paths, none twice, none blank", () => {
	expect(() => checkFiles(files)).not.toThrow();
	expect(() => checkFiles([{ path: "dir/a.rb", content: "x" }])).not.toThrow();
	expect(() => checkFiles([])).toThrow(error({ message: { files: ["can't be empty"] } }));
	expect(() => checkFiles(Array.from({ length: 11 }, (_, i) => ({ path: `f${i}`, content: "x" })))).toThrow(
		error({ message: { files: ["are too many (maximum is 10)"] } }),
	);
	for (const path of ["../a", "/a", "a//b", "a b"]) expect(() => checkFiles([{ path, content: "x" }])).toThrow();
	expect(() => checkFiles([files[0], files[0]])).toThrow(error({ message: { files: ["a.rb is there twice"] } }));
	expect(() => checkFiles([{ path: "a", content: " " }])).toThrow(error({ message: { files: ["a can't be blank"] } }));
});

it("shows a snippet as v4 does, its files' raw links encoded by segment", () => {
	const s: SnippetDoc = {
		id: 5,
		project_id: 2,
		title: "t",
		...storedFiles([{ path: "dir/a b.rb", content: "x" }]),
		visibility_level: 10,
		author_id: 1,
		expires_at: null,
		created_at: "2016-01-01T00:00:00.000Z",
		updated_at: "2016-01-01T00:00:00.000Z",
	};
	expect(presentSnippetV4(s, null, { gitlabUrl: "https://g.example", projectPath: "ada/demo" })).toMatchObject({
		description: null,
		visibility: "internal",
		author: null,
		web_url: "https://g.example/ada/demo/-/snippets/5",
		file_name: "dir/a b.rb",
		files: [{ path: "dir/a b.rb", raw_url: "https://g.example/ada/demo/-/snippets/5/raw/main/dir/a%20b.rb" }],
	});
});
