/** Project snippet entity (docs/api.md#snippet-entity), pure. */
import type { SnippetDoc } from "../models/snippet";
import type { UserDoc } from "../models/user";
import { integer, nullable, object, oneValue, string, timestamp } from "./json-schema";
import type { ProjectPlace } from "./pipeline";
import { presentUserBasic } from "./user";

/**
 * The author as docs/api.md#snippet-entity shows it: `{id, username, email, name, state,
 * created_at}`, with GitLab 8.16's UserBasic links `avatar_url` and `web_url`.
 */
export function presentSnippetAuthor(u: UserDoc, gitlabUrl: string) {
	const basic = presentUserBasic(u, gitlabUrl);
	return {
		id: u.id,
		username: u.username,
		email: u.email,
		name: u.name,
		state: u.state,
		created_at: u.created_at,
		avatar_url: basic.avatar_url,
		web_url: basic.web_url,
	};
}

/**
 * The single-snippet shape, used alike by get, list, create and update:
 * `{id, title, file_name, author, expires_at, updated_at, created_at, web_url}` (`web_url` as
 * GitLab 8.16's ProjectSnippet entity has it). Content is only served by the raw endpoint.
 */
export function presentSnippet(s: SnippetDoc, author: UserDoc | null, place: ProjectPlace) {
	return {
		id: s.id,
		title: s.title,
		file_name: s.file_name,
		author: author ? presentSnippetAuthor(author, place.gitlabUrl) : null,
		expires_at: s.expires_at ?? null,
		updated_at: s.updated_at,
		created_at: s.created_at,
		web_url: `${place.gitlabUrl}/${place.projectPath}/snippets/${s.id}`,
	};
}

/**
 * The DELETE response: GitLab 8 serialises the destroyed record itself (raw model columns,
 * content included), not the entity.
 */
export function presentDeletedSnippet(s: SnippetDoc) {
	return {
		id: s.id,
		title: s.title,
		content: s.content,
		author_id: s.author_id,
		project_id: s.project_id,
		created_at: s.created_at,
		updated_at: s.updated_at,
		file_name: s.file_name,
		type: "ProjectSnippet",
		visibility_level: s.visibility_level,
	};
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
const SNIPPET_AUTHOR = object(
	{ id: integer, username: string, email: string, name: string, state: string, created_at: timestamp, avatar_url: string, web_url: string },
	"SnippetAuthor",
);
export const SNIPPET = object(
	{
		id: integer,
		title: string,
		file_name: string,
		author: nullable(SNIPPET_AUTHOR),
		expires_at: nullable(timestamp),
		updated_at: timestamp,
		created_at: timestamp,
		web_url: string,
	},
	"Snippet",
);
export const DELETED_SNIPPET = object(
	{
		id: integer,
		title: string,
		content: string,
		author_id: integer,
		project_id: integer,
		created_at: timestamp,
		updated_at: timestamp,
		file_name: string,
		type: oneValue("ProjectSnippet"),
		visibility_level: integer,
	},
	"DeletedSnippet",
);
