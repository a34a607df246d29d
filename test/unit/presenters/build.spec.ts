import { presentBuild, presentErasedBuild, withNumericOffset } from "../../../presenters/build";
import { type BuildDoc } from "../../../models/build";
import { avatarUrl } from "../../../presenters/user";
import { type UserDoc } from "../../../models/user";

const GITLAB = "http://gitlab.example.com";

const commit = {
	id: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
	short_id: "0ff3ae19",
	title: "Test the CI integration.",
	message: "Test the CI integration.\n\nMore words.",
	author_name: "Administrator",
	author_email: "admin@example.com",
	created_at: "2015-12-24T16:51:14.000+01:00",
};

const user: UserDoc = {
	id: 1,
	username: "root",
	email: "admin@example.com",
	name: "Administrator",
	state: "active",
	is_admin: true,
	bio: null,
	created_at: "2015-12-21T13:14:24.077Z",
	location: "Here",
	organization: "Org",
	// A stored extra that the build's user must not show:
	projects_limit: 10,
};

function doc(over: Partial<BuildDoc> = {}): BuildDoc {
	return {
		id: 69,
		project_id: 5,
		seq: 3,
		project_seq: "5|0000000003",
		project_status: "5|failed",
		project_sha: `5|${commit.id}`,
		name: "rubocop",
		stage: "test",
		ref: "master",
		tag: false,
		status: "failed",
		coverage: null,
		created_at: "2016-01-11T10:13:33.506Z",
		started_at: "2016-01-11T10:14:09.526Z",
		finished_at: "2016-01-11T10:15:10.506Z",
		commit,
		user_id: 1,
		artifacts: { filename: "artifacts.zip", size: 1000, file: "artifacts-abc-0123456789abcdef" },
		erased_at: null,
		erased_by: null,
		...over,
	};
}

const expectedCommit = {
	id: commit.id,
	short_id: "0ff3ae19",
	title: "Test the CI integration.",
	message: "Test the CI integration.\n\nMore words.",
	author_name: "Administrator",
	author_email: "admin@example.com",
	created_at: "2015-12-24T16:51:14.000+01:00",
	// An older record, stored before builds had a committer: the author is shown as committer.
	committer_name: "Administrator",
	committer_email: "admin@example.com",
};

/** GitLab 8.16's User entity, in its order. */
const expectedUser = {
	name: "Administrator",
	username: "root",
	id: 1,
	state: "active",
	avatar_url: avatarUrl("admin@example.com"),
	web_url: `${GITLAB}/root`,
	created_at: "2015-12-21T13:14:24.077Z",
	is_admin: true,
	bio: null,
	location: "Here",
	skype: "",
	linkedin: "",
	twitter: "",
	website_url: "",
	organization: "Org",
};

describe("presentBuild", () => {
	it("has exactly the fields of docs/api.md#build-entity, with the embedded commit and user", () => {
		expect(presentBuild(doc(), user, GITLAB)).toEqual({
			id: 69,
			name: "rubocop",
			stage: "test",
			ref: "master",
			tag: false,
			status: "failed",
			coverage: null,
			created_at: "2016-01-11T10:13:33.506Z",
			started_at: "2016-01-11T10:14:09.526Z",
			finished_at: "2016-01-11T10:15:10.506Z",
			runner: null,
			commit: expectedCommit,
			user: expectedUser,
			artifacts_file: { filename: "artifacts.zip", size: 1000 },
		});
		const shown = presentBuild(doc(), user, GITLAB);
		expect(Object.keys(shown.user!)).toEqual(Object.keys(expectedUser));
		expect(Object.keys(shown.commit)).toEqual([
			"id",
			"short_id",
			"title",
			"author_name",
			"author_email",
			"created_at",
			"committer_name",
			"committer_email",
			"message",
		]);
		expect(shown.user).not.toHaveProperty("projects_limit");
		expect(shown.user).not.toHaveProperty("email");
	});

	it("shows the committer the CI side named, and a user's missing location and organization as null", () => {
		const withCommitter = doc({ commit: { ...commit, committer_name: "Bot", committer_email: "bot@example.com" } });
		const { location: _l, organization: _o, ...bare } = user;
		const out = presentBuild(withCommitter, bare, GITLAB);
		expect(out.commit).toMatchObject({ author_name: "Administrator", committer_name: "Bot", committer_email: "bot@example.com" });
		expect(out.user).toMatchObject({ location: null, organization: null });
	});

	it("shows artifacts_file null, user null and the coverage value when so", () => {
		const out = presentBuild(doc({ artifacts: null, user_id: null, coverage: 66.7, status: "success" }), null, GITLAB);
		expect(out.artifacts_file).toBeNull();
		expect(out.user).toBeNull();
		expect(out.coverage).toBe(66.7);
		expect(out.status).toBe("success");
	});

	it("never leaks storage fields", () => {
		const out = presentBuild(doc(), user, GITLAB) as Record<string, unknown>;
		for (const k of ["project_id", "seq", "project_seq", "project_status", "project_sha", "user_id", "artifacts", "erased_at", "erased_by", "file"])
			expect(out).not.toHaveProperty(k);
		expect(out.artifacts_file).not.toHaveProperty("file");
	});

	it("shows a tag build as tag true", () => {
		expect(presentBuild(doc({ tag: true, ref: "v1.0" }), null, GITLAB)).toMatchObject({ tag: true, ref: "v1.0" });
	});
});

describe("presentErasedBuild", () => {
	it("has no artifacts_file and has download_url, with the other fields of the Build", () => {
		const out = presentErasedBuild(doc({ artifacts: null, erased_at: "2016-01-12T00:00:00.000Z", erased_by: 1 }), user, GITLAB);
		expect(out).toEqual({
			id: 69,
			name: "rubocop",
			stage: "test",
			ref: "master",
			tag: false,
			status: "failed",
			coverage: null,
			created_at: "2016-01-11T10:13:33.506Z",
			started_at: "2016-01-11T10:14:09.526Z",
			finished_at: "2016-01-11T10:15:10.506Z",
			runner: null,
			commit: expectedCommit,
			user: expectedUser,
			download_url: null,
		});
		expect(out).not.toHaveProperty("artifacts_file");
	});
});

describe("withNumericOffset", () => {
	it.each([
		["2015-12-24T16:51:14.000+01:00", "2015-12-24T16:51:14.000+01:00"],
		["2015-12-24T16:51:14-05:00", "2015-12-24T16:51:14-05:00"],
		["2015-12-24T15:51:14Z", "2015-12-24T15:51:14.000+00:00"],
		["2015-12-24T15:51:14.123Z", "2015-12-24T15:51:14.123+00:00"],
	])("%s → %s", (input, output) => {
		expect(withNumericOffset(input)).toBe(output);
	});
});
