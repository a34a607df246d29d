/** API v4's user, project and member entities (presenters/user.v4.ts, presenters/project.v4.ts), field by field. */
import type { ProjectDoc } from "../../../models/project";
import type { UserDoc } from "../../../models/user";
import { presentBasicProjectV4, presentMemberV4, presentProjectWithAccessV4, visibilityOf } from "../../../presenters/project.v4";
import { presentUserBasicV4, presentUserPublicV4, presentUserV4, presentUserWithAdminV4 } from "../../../presenters/user.v4";

const URL = "https://gitlab.example.com";
const user: UserDoc = {
	id: 7,
	username: "ada",
	email: "Ada@Example.com",
	name: "Ada",
	state: "active",
	is_admin: false,
	created_at: "2016-01-01T00:00:00.000Z",
};
const project: ProjectDoc = {
	id: 3,
	name: "Demo",
	path: "demo",
	namespace: "ada",
	path_with_namespace: "ada/demo",
	description: null,
	visibility_level: 20,
	public_builds: false,
	creator_id: 7,
	created_at: "2016-01-02T00:00:00.000Z",
};

it("grows the user entity from UserBasic to UserWithAdmin", () => {
	const basic = presentUserBasicV4(user, URL);
	expect(basic).toEqual({
		id: 7,
		username: "ada",
		name: "Ada",
		state: "active",
		locked: false,
		avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
		web_url: `${URL}/ada`,
	});
	expect(presentUserBasicV4({ ...user, state: "blocked" }, URL).locked).toBe(true);
	const full = presentUserV4(user, URL);
	expect(full).toMatchObject({ created_at: user.created_at, bio: "", location: "", public_email: null, bot: false });
	const pub = presentUserPublicV4(user, URL);
	expect(pub).toMatchObject({ email: "Ada@Example.com", theme_id: 2, color_scheme_id: 1, two_factor_enabled: false, commit_email: "Ada@Example.com" });
	expect(pub).not.toHaveProperty("is_admin");
	expect(presentUserWithAdminV4({ ...user, is_admin: true }, URL)).toMatchObject({ is_admin: true, namespace_id: 7 });
});

it("names visibility with a word, and shows the project's namespace and permissions", () => {
	expect([0, 10, 20, 99].map(visibilityOf)).toEqual(["private", "internal", "public", "private"]);
	const basic = presentBasicProjectV4(project, user, URL);
	expect(basic).toMatchObject({
		id: 3,
		name_with_namespace: "Ada / Demo",
		ssh_url_to_repo: "git@gitlab.example.com:ada/demo.git",
		http_url_to_repo: `${URL}/ada/demo.git`,
		namespace: { id: 7, name: "ada", path: "ada", kind: "user", full_path: "ada", parent_id: null, web_url: `${URL}/ada` },
	});
	const full = presentProjectWithAccessV4(project, user, URL, null);
	expect(full).toMatchObject({
		visibility: "public",
		public_jobs: false,
		owner: { id: 7, username: "ada" },
		_links: { self: `${URL}/api/v4/projects/3`, labels: `${URL}/api/v4/projects/3/labels` },
		permissions: { project_access: null, group_access: null },
	});
	expect(presentProjectWithAccessV4(project, null, URL, 30).permissions.project_access).toEqual({ access_level: 30, notification_level: 3 });
});

it("shows a member as UserBasic with its membership", () => {
	expect(presentMemberV4(user, 40, "2016-01-03T00:00:00.000Z", URL)).toMatchObject({
		id: 7,
		access_level: 40,
		created_at: "2016-01-03T00:00:00.000Z",
		expires_at: null,
		membership_state: "active",
	});
});
