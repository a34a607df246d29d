import type { RouteTable } from "../types";

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
};
