import { changedProject } from "../../../../lib/integrations/settings-cache";

describe("changedProject", () => {
	it("accepts a positive integer project id only", () => {
		expect(changedProject({ projectId: 7 })).toBe(7);
		for (const bad of [null, {}, { projectId: "7" }, { projectId: 0 }, { projectId: -1 }, { projectId: 1.5 }, { projectId: 2 ** 60 }])
			expect(changedProject(bad)).toBeNull();
	});
});
