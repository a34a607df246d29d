import { CATALOGUE } from "../../lib/integrations/catalogue";
import { ANY_INTEGRATION, settingsSchema } from "../../lib/integrations/settings-schema";
import { oneValue } from "../../presenters/json-schema";
import { INTEGRATION } from "../../presenters/integration";
import { ok } from "./answers";
import type { RouteTable } from "./types";

const PUT = "PUT /projects/:id/services/:slug";

/** `:slug` takes `-` or `_` spellings (clients send both); the service resolves it. */
export const integrationsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/services/:slug": "integrations.show",
		[PUT]: "integrations.update",
		"DELETE /projects/:id/services/:slug": "integrations.remove",
	},
	answers: {
		// A PUT that keeps finding the settings changed under it gives up: 409. A required secret
		// neither sent nor stored, or settings the integration's own rules refuse: 400.
		[PUT]: { ...ok(oneValue(true)), 400: "RuleRefusal", 409: "Conflict" },
		"GET /projects/:id/services/:slug": ok(INTEGRATION),
		"DELETE /projects/:id/services/:slug": ok(oneValue(true)),
	},
	// The fields depend on the integration: each one's PUT under its slug takes its own.
	takes: { [PUT]: ANY_INTEGRATION },
	variants: { [PUT]: { param: "slug", takes: Object.fromEntries(CATALOGUE.map(def => [def.slug, settingsSchema(def, "v3", false)])) } },
};
