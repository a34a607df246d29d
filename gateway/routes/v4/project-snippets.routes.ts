import { arrayOf, string } from "../../../presenters/json-schema";
import { SNIPPET_V4 } from "../../../presenters/snippet.v4";
import { created, noContent, ok } from "../answers";
import type { RouteTable } from "../types";

/** A file's content, byte for byte. */
const RAW = ok(string, "text/plain; charset=utf-8");

/** Project snippets (docs/api.md#v4-snippets); a file's path is one URL-encoded segment (`dir%2Fa.rb`), as GitLab takes it. */
export const projectSnippetsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/snippets": "snippets.listV4",
		"POST /projects/:id/snippets": "snippets.createV4",
		"GET /projects/:id/snippets/:snippet_id": "snippets.getV4",
		"PUT /projects/:id/snippets/:snippet_id": "snippets.updateV4",
		"DELETE /projects/:id/snippets/:snippet_id": "snippets.removeV4",
		"GET /projects/:id/snippets/:snippet_id/raw": "snippets.rawV4",
		"GET /projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw": "snippets.fileRawV4",
	},
	answers: {
		"GET /projects/:id/snippets": ok(arrayOf(SNIPPET_V4)),
		// A visibility above the project's, a file the snippet has not (or has twice): 400, as GitLab.
		"POST /projects/:id/snippets": { ...created(SNIPPET_V4), 400: "RuleRefusal" },
		"GET /projects/:id/snippets/:snippet_id": ok(SNIPPET_V4),
		"PUT /projects/:id/snippets/:snippet_id": { ...ok(SNIPPET_V4), 400: "RuleRefusal" },
		"DELETE /projects/:id/snippets/:snippet_id": noContent,
		"GET /projects/:id/snippets/:snippet_id/raw": RAW,
		"GET /projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw": RAW,
	},
};
