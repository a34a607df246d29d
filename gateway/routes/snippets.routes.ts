import { arrayOf, object, string } from "../../presenters/json-schema";
import { DELETED_SNIPPET, SNIPPET } from "../../presenters/snippet";
import { created, ok } from "./answers";
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
	answers: {
		"GET /projects/:id/snippets": ok(arrayOf(SNIPPET)),
		// A visibility above the project's: 400, as GitLab.
		"POST /projects/:id/snippets": { ...created(SNIPPET), 400: "RuleRefusal" },
		"GET /projects/:id/snippets/:snippet_id": ok(SNIPPET),
		"PUT /projects/:id/snippets/:snippet_id": { ...ok(SNIPPET), 400: "RuleRefusal" },
		// A snippet that is not there: 200 and `{}` (docs/api.md#decisions).
		"DELETE /projects/:id/snippets/:snippet_id": ok({ anyOf: [DELETED_SNIPPET, object({})] }),
		"GET /projects/:id/snippets/:snippet_id/raw": ok(string, "text/plain; charset=utf-8"),
	},
};
