import { CATALOGUE } from "../../../lib/integrations/catalogue";
import { ANY_INTEGRATION, settingsSchema } from "../../../lib/integrations/settings-schema";
import { INTEGRATION_BASIC_V4, INTEGRATION_V4 } from "../../../presenters/integration.v4";
import { arrayOf } from "../../../presenters/json-schema";
import { noContent, ok, type Answers } from "../answers";
import type { RouteTable } from "../types";

const SEGMENTS = ["integrations", "services"];

/**
 * Integrations (docs/api.md#v4-integrations) under `/integrations` and GitLab v4's `/services`
 * alias; each integration's PUT is described under its GitLab name with its own fields.
 */
export const integrationsRoutes: RouteTable = {
	api: Object.fromEntries(
		SEGMENTS.flatMap(segment => [
			[`GET /projects/:id/${segment}`, "integrations.listV4"],
			[`GET /projects/:id/${segment}/:slug`, "integrations.showV4"],
			[`PUT /projects/:id/${segment}/:slug`, "integrations.updateV4"],
			[`DELETE /projects/:id/${segment}/:slug`, "integrations.removeV4"],
		]),
	),
	answers: Object.fromEntries(
		SEGMENTS.flatMap((segment): [string, Answers][] => [
			[`GET /projects/:id/${segment}`, ok(arrayOf(INTEGRATION_BASIC_V4))],
			[`GET /projects/:id/${segment}/:slug`, ok(INTEGRATION_V4)],
			// A PUT that keeps finding the settings changed under it gives up: 409. A required secret
			// neither sent nor stored, or settings the integration's own rules refuse: 400.
			[`PUT /projects/:id/${segment}/:slug`, { ...ok(INTEGRATION_V4), 400: "RuleRefusal", 409: "Conflict" }],
			[`DELETE /projects/:id/${segment}/:slug`, noContent],
		]),
	),
	takes: Object.fromEntries(SEGMENTS.map(segment => [`PUT /projects/:id/${segment}/:slug`, ANY_INTEGRATION])),
	variants: {
		"PUT /projects/:id/integrations/:slug": {
			param: "slug",
			takes: Object.fromEntries(CATALOGUE.map(def => [def.gitlabName, settingsSchema(def, "v4", true)])),
		},
	},
};
