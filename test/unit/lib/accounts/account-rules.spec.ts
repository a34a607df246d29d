import { pathFromName, validateNewProject, validateNewUser } from "../../../../lib/accounts/account-rules";

describe("new users", () => {
	it("accepts a well-formed user", () => {
		expect(validateNewUser({ username: "jane.doe", name: "Jane", email: "jane@example.com", password: "longenough" })).toBeNull();
	});
	it("reports every bad field", () => {
		expect(validateNewUser({ username: "-bad", name: " ", email: "nope", password: "short" })).toEqual({
			username: [expect.stringContaining("can contain only letters")],
			name: ["can't be blank"],
			email: ["is invalid"],
			password: ["is too short (minimum is 8 characters)"],
		});
	});
});

describe("new projects", () => {
	it("derives the path from the name and places it in the creator's namespace", () => {
		expect(pathFromName("My Cool Project!")).toBe("my-cool-project");
		const { errors, project } = validateNewProject({ name: "My Project" }, "jane");
		expect(errors).toBeNull();
		expect(project).toEqual({
			name: "My Project",
			path: "my-project",
			namespace: "jane",
			path_with_namespace: "jane/my-project",
			description: null,
			visibility_level: 0,
			public_builds: true,
		});
	});
	it("refuses bad visibility and paths", () => {
		expect(validateNewProject({ name: "x", visibility_level: 5 }, "jane").errors).toEqual({ visibility_level: ["is not included in the list"] });
		expect(validateNewProject({ name: "x", path: "../etc" }, "jane").errors?.path).toHaveLength(1);
		expect(validateNewProject({ name: "" }, "jane").errors).toMatchObject({ name: ["can't be blank"] });
	});
});
