import type { RouteTable } from "./types";

/** `:slug` takes `-` or `_` spellings (clients send both); the service resolves it. */
export const integrationsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/services/:slug": "integrations.show",
		"PUT /projects/:id/services/:slug": "integrations.update",
		"DELETE /projects/:id/services/:slug": "integrations.remove",
	},
};
