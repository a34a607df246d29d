import type { RouteTable } from "../types";

/** Deploy keys (docs/api.md#v4-deploy-keys): a project's, and the instance's for admins; v4 has no `/keys` path. */
export const deployKeysRoutes: RouteTable = {
	api: {
		"GET /deploy_keys": "keys.listAllV4",
		"GET /projects/:id/deploy_keys": "keys.listV4",
		"POST /projects/:id/deploy_keys": "keys.createV4",
		"GET /projects/:id/deploy_keys/:key_id": "keys.getV4",
		"PUT /projects/:id/deploy_keys/:key_id": "keys.updateV4",
		"DELETE /projects/:id/deploy_keys/:key_id": "keys.removeV4",
		"POST /projects/:id/deploy_keys/:key_id/enable": "keys.enableV4",
	},
	// A key changed by another request meanwhile, again and again: 409, as v3's.
	answers: {
		"GET /deploy_keys": { 403: "Forbidden" },
		"POST /projects/:id/deploy_keys": { 409: "Conflict" },
		"PUT /projects/:id/deploy_keys/:key_id": { 409: "Conflict" },
		"DELETE /projects/:id/deploy_keys/:key_id": { 409: "Conflict" },
		"POST /projects/:id/deploy_keys/:key_id/enable": { 409: "Conflict" },
	},
};
