import type { RouteTable } from "./types";

/** Project snippets. The three reads declare `auth: "optional"`: public snippets of public projects need no token. */
export const snippetsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/snippets": "snippets.list",
		"POST /projects/:id/snippets": "snippets.create",
		"GET /projects/:id/snippets/:snippet_id": "snippets.get",
		"PUT /projects/:id/snippets/:snippet_id": "snippets.update",
		"DELETE /projects/:id/snippets/:snippet_id": "snippets.remove",
		"GET /projects/:id/snippets/:snippet_id/raw": "snippets.raw",
	},
};
