import { DEPLOY_KEY_WITH_PROJECTS_V4, PROJECT_DEPLOY_KEY_V4, SSH_KEY_V4 } from "../../../presenters/deploy-key.v4";
import { arrayOf } from "../../../presenters/json-schema";
import { created, noContent, ok } from "../answers";
import type { RouteTable } from "../types";

/** A key changed by another request meanwhile, again and again: 409, as v3's. */
const RACED = { 409: "Conflict" } as const;

/** Deploy keys (docs/api.md#v4-deploy-keys): a project's, and the instance's for admins; v4 has no `/keys` path. */
export const deployKeysRoutes: RouteTable = {
	api: {
		"GET /deploy_keys": "deploy-keys.listAllV4",
		"GET /projects/:id/deploy_keys": "deploy-keys.listV4",
		"POST /projects/:id/deploy_keys": "deploy-keys.createV4",
		"GET /projects/:id/deploy_keys/:key_id": "deploy-keys.getV4",
		"PUT /projects/:id/deploy_keys/:key_id": "deploy-keys.updateV4",
		"DELETE /projects/:id/deploy_keys/:key_id": "deploy-keys.removeV4",
		"POST /projects/:id/deploy_keys/:key_id/enable": "deploy-keys.enableV4",
	},
	answers: {
		"GET /deploy_keys": { ...ok(arrayOf(DEPLOY_KEY_WITH_PROJECTS_V4)), 403: "Forbidden" },
		"GET /projects/:id/deploy_keys": ok(arrayOf(PROJECT_DEPLOY_KEY_V4)),
		// A key that does not parse, or one another project has and the caller cannot reach: 400.
		"POST /projects/:id/deploy_keys": { ...created(PROJECT_DEPLOY_KEY_V4), ...RACED, 400: "RuleRefusal" },
		"GET /projects/:id/deploy_keys/:key_id": ok(PROJECT_DEPLOY_KEY_V4),
		"PUT /projects/:id/deploy_keys/:key_id": { ...ok(PROJECT_DEPLOY_KEY_V4), ...RACED },
		"DELETE /projects/:id/deploy_keys/:key_id": { ...noContent, ...RACED },
		"POST /projects/:id/deploy_keys/:key_id/enable": { ...created(SSH_KEY_V4), ...RACED },
	},
};
