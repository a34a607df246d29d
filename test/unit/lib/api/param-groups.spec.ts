/** Grape's relations between parameters, checked with its messages in the order declared (lib/api/param-groups.ts). */
import { checkParamGroups, groupMembers, type ParamGroup } from "../../../../lib/api/param-groups";

const error = (groups: ParamGroup[], params: object) => {
	try {
		checkParamGroups(groups, params);
		return null;
	} catch (err) {
		return (err as { data: { body: unknown } }).data.body;
	}
};

it("exactly one: neither is missing, both are mutually exclusive", () => {
	const groups: ParamGroup[] = [{ exactlyOneOf: ["label_id", "name"] }];
	expect(error(groups, {})).toEqual({ error: "label_id, name are missing, exactly one parameter must be provided" });
	expect(error(groups, { label_id: "1", name: "bug" })).toEqual({ error: "label_id, name are mutually exclusive" });
	expect(error(groups, { name: "bug" })).toBeNull();
	// A null is sent unless the group says otherwise.
	expect(error(groups, { name: null })).toBeNull();
	expect(error([{ exactlyOneOf: ["label_id", "name"], nullIsAbsent: true }], { name: null })).toEqual({
		error: "label_id, name are missing, exactly one parameter must be provided",
	});
});

it("at least one, and mutually exclusive, in the order declared; a joint rule is the action's own to check", () => {
	const groups: ParamGroup[] = [
		{ atLeastOneOf: ["title", "files", "content"] },
		{ mutuallyExclusive: ["files", "content"] },
		{ jointly: ["title"], schema: { required: ["title"] } },
	];
	expect(error(groups, {})).toEqual({ error: "title, files, content are missing, at least one parameter must be provided" });
	expect(error(groups, { files: [], content: "x" })).toEqual({ error: "files, content are mutually exclusive" });
	expect(error(groups, { files: [] })).toBeNull();
	expect(groups.map(groupMembers)).toEqual([["title", "files", "content"], ["files", "content"], ["title"]]);
});
