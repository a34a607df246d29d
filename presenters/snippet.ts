/** Project snippet entity (docs/api.md#snippet-entity), pure. */
import type { SnippetDoc } from "../models/snippet";
import type { UserDoc } from "../models/user";

/** The author as docs/api.md#snippet-entity shows it: `{id, username, email, name, state, created_at}`. */
export function presentSnippetAuthor(u: UserDoc) {
	return { id: u.id, username: u.username, email: u.email, name: u.name, state: u.state, created_at: u.created_at };
}

/**
 * The single-snippet shape, used alike by get, list, create, update and delete:
 * `{id, title, file_name, author, expires_at, updated_at, created_at}`. Content is only
 * served by the raw endpoint.
 */
export function presentSnippet(s: SnippetDoc, author: UserDoc | null) {
	return {
		id: s.id,
		title: s.title,
		file_name: s.file_name,
		author: author ? presentSnippetAuthor(author) : null,
		expires_at: s.expires_at ?? null,
		updated_at: s.updated_at,
		created_at: s.created_at,
	};
}

export type SnippetEntity = ReturnType<typeof presentSnippet>;

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
