import { oneValue } from "../../presenters/json-schema";
import { INTEGRATION } from "../../presenters/integration";
import { ok } from "./answers";
import type { RouteTable } from "./types";

/** `:slug` takes `-` or `_` spellings (clients send both); the service resolves it. */
export const integrationsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/services/:slug": "integrations.show",
		"PUT /projects/:id/services/:slug": "integrations.update",
		"DELETE /projects/:id/services/:slug": "integrations.remove",
	},
	answers: {
		// A PUT that keeps finding the settings changed under it gives up: 409.
		"PUT /projects/:id/services/:slug": { ...ok(oneValue(true)), 409: "Conflict" },
		"GET /projects/:id/services/:slug": ok(INTEGRATION),
		"DELETE /projects/:id/services/:slug": ok(oneValue(true)),
	},
};
