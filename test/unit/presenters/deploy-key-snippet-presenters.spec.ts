/** The deploy-key and snippet entities: exactly the fields of docs/api.md#deploy-key-entity and #snippet-entity, in order. */
import { presentDeletedDeployKey, presentDeployKey } from "../../../presenters/deploy-key";
import { type DeployKeyDoc } from "../../../models/deploy-key";
import { presentDeletedSnippet, presentSnippet, presentSnippetAuthor } from "../../../presenters/snippet";
import type { SnippetDoc } from "../../../models/snippet";
import type { UserDoc } from "../../../models/user";

const key: DeployKeyDoc = {
	id: 13,
	title: "My deploy key",
	key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINN0DEAU995q2htLOX6yiuTcFxcdC/tb3RielQMJx+vI me@host",
	fingerprint: "72:bb:90:bb:6f:82:66:dc:8f:f1:14:5d:b7:63:c0:4f",
	user_id: 2,
	public: false,
	created_at: "2015-08-29T12:44:31.550Z",
	updated_at: "2015-08-29T12:50:57.259Z",
	lock_version: 0,
};

describe("deploy-key presenters", () => {
	it("SSHKey entity: id, title, key, created_at and nothing else", () => {
		const entity = presentDeployKey({ ...key, project_id: 5 } as DeployKeyDoc);
		expect(Object.keys(entity)).toEqual(["id", "title", "key", "created_at"]);
		expect(entity).toEqual({ id: 13, title: "My deploy key", key: key.key, created_at: "2015-08-29T12:44:31.550Z" });
	});

	it("deleted record: adds updated_at, public, user_id and fingerprint", () => {
		const deleted = presentDeletedDeployKey(key);
		expect(Object.keys(deleted).sort()).toEqual(["created_at", "fingerprint", "id", "key", "public", "title", "updated_at", "user_id"]);
		expect(deleted).toEqual({
			id: 13,
			user_id: 2,
			created_at: key.created_at,
			updated_at: key.updated_at,
			key: key.key,
			title: "My deploy key",
			fingerprint: key.fingerprint,
			public: false,
		});
		expect(presentDeletedDeployKey({ ...key, user_id: undefined as unknown as null }).user_id).toBeNull();
	});
});

const author: UserDoc = {
	id: 2,
	username: "jdoe",
	email: "jdoe@example.com",
	name: "John Doe",
	state: "active",
	is_admin: false,
	bio: "secret bio",
	created_at: "2012-05-23T08:00:58.000Z",
};

const snippet: SnippetDoc = {
	id: 1,
	project_id: 5,
	title: "test",
	file_name: "add.rb",
	content: "puts 'hello'\n",
	visibility_level: 10,
	author_id: 2,
	expires_at: null,
	created_at: "2012-06-28T10:52:04.000Z",
	updated_at: "2012-06-28T10:52:05.000Z",
};

const place = { gitlabUrl: "https://gitlab.example.com", projectPath: "jdoe/demo" };

describe("snippet presenters", () => {
	it("single-snippet shape: id, title, file_name, author, expires_at, updated_at, created_at, and GitLab 8.16's web_url", () => {
		const entity = presentSnippet(snippet, author, place);
		expect(Object.keys(entity)).toEqual(["id", "title", "file_name", "author", "expires_at", "updated_at", "created_at", "web_url"]);
		expect(entity).toEqual({
			id: 1,
			title: "test",
			file_name: "add.rb",
			author: {
				id: 2,
				username: "jdoe",
				email: "jdoe@example.com",
				name: "John Doe",
				state: "active",
				created_at: "2012-05-23T08:00:58.000Z",
				// md5("jdoe@example.com")
				avatar_url: "https://www.gravatar.com/avatar/694ea0904ceaf766c6738166ed89bafb?s=80&d=identicon",
				web_url: "https://gitlab.example.com/jdoe",
			},
			expires_at: null,
			updated_at: "2012-06-28T10:52:05.000Z",
			created_at: "2012-06-28T10:52:04.000Z",
			web_url: "https://gitlab.example.com/jdoe/demo/snippets/1",
		});
	});

	it("never shows the content, the visibility or internal ids", () => {
		const json = JSON.stringify(presentSnippet(snippet, author, place));
		expect(json).not.toContain("hello");
		expect(json).not.toContain("visibility_level");
		expect(json).not.toContain("project_id");
		expect(json).not.toContain("secret bio");
	});

	it("author: the six fields of docs/api.md#snippet-entity and UserBasic's two links; null when the user is gone", () => {
		expect(Object.keys(presentSnippetAuthor(author, place.gitlabUrl))).toEqual([
			"id",
			"username",
			"email",
			"name",
			"state",
			"created_at",
			"avatar_url",
			"web_url",
		]);
		expect(presentSnippet(snippet, null, place).author).toBeNull();
	});

	it("deleted record: the raw model columns GitLab 8 serialises, content included", () => {
		expect(presentDeletedSnippet(snippet)).toEqual({
			id: 1,
			title: "test",
			content: "puts 'hello'\n",
			author_id: 2,
			project_id: 5,
			created_at: snippet.created_at,
			updated_at: snippet.updated_at,
			file_name: "add.rb",
			type: "ProjectSnippet",
			visibility_level: 10,
		});
	});
});
