/** API v4's ProjectSnippet entity (docs/api.md#v4-snippets), beside v3's; pure. */
import { pathsOf } from "../lib/snippets/snippet-files";
import type { SnippetDoc } from "../models/snippet";
import type { UserDoc } from "../models/user";
import type { ProjectPlace } from "./pipeline";
import { visibilityOf } from "./project.v4";
import { arrayOf, boolean, integer, nullable, object, oneOfValues, string, timestamp } from "./json-schema";
import { presentUserBasicV4, USER_BASIC_V4 } from "./user.v4";

/** The ref a snippet's files are read at (snippets here have no repository: its one ref). */
export const SNIPPET_REF = "main";

/**
 * `{id, title, description, visibility, author, created_at, updated_at, project_id, web_url,
 * raw_url, file_name, files: [{path, raw_url}], imported, imported_from}`: `file_name` the first
 * file's; the contents only through the raw endpoints.
 */
export function presentSnippetV4(s: SnippetDoc, author: UserDoc | null, place: ProjectPlace) {
	const webUrl = `${place.gitlabUrl}/${place.projectPath}/-/snippets/${s.id}`;
	return {
		id: s.id,
		title: s.title,
		description: s.description ?? null,
		visibility: visibilityOf(s.visibility_level),
		author: author ? presentUserBasicV4(author, place.gitlabUrl) : null,
		created_at: s.created_at,
		updated_at: s.updated_at,
		project_id: s.project_id,
		web_url: webUrl,
		raw_url: `${webUrl}/raw`,
		file_name: s.file_name,
		files: pathsOf(s).map(path => ({ path, raw_url: `${webUrl}/raw/${SNIPPET_REF}/${path.split("/").map(encodeURIComponent).join("/")}` })),
		imported: false,
		imported_from: "none",
	};
}

/** The shape above, for the API description (presenters/json-schema.ts). */
export const SNIPPET_V4 = object(
	{
		id: integer,
		title: string,
		description: nullable(string),
		visibility: oneOfValues("private", "internal", "public"),
		author: nullable(USER_BASIC_V4),
		created_at: timestamp,
		updated_at: timestamp,
		project_id: integer,
		web_url: string,
		raw_url: string,
		file_name: string,
		files: arrayOf(object({ path: string, raw_url: string })),
		imported: boolean,
		imported_from: string,
	},
	"ProjectSnippetV4",
);
