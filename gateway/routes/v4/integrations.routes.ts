import type { RouteTable } from "../types";

/** Integrations (docs/api.md#v4-integrations) under `/integrations` and GitLab v4's `/services` alias. */
export const integrationsRoutes: RouteTable = {
	api: Object.fromEntries(
		["integrations", "services"].flatMap(segment => [
			[`GET /projects/:id/${segment}`, "integrations.listV4"],
			[`GET /projects/:id/${segment}/:slug`, "integrations.showV4"],
			[`PUT /projects/:id/${segment}/:slug`, "integrations.updateV4"],
			[`DELETE /projects/:id/${segment}/:slug`, "integrations.removeV4"],
		]),
	),
	answers: Object.fromEntries(["integrations", "services"].map(segment => [`PUT /projects/:id/${segment}/:slug`, { 409: "Conflict" }])),
};
