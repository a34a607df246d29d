import type { RouteTable } from "./types";

/**
 * Deploy keys under both paths: `keys` (8.0+) and `deploy_keys` (8.6+, what later clients send),
 * with 8.11's enable and disable; and every key of the instance, for admins.
 */
export const keysRoutes: RouteTable = {
	api: {
		"GET /deploy_keys": "keys.listAll",
		...Object.fromEntries(
			["keys", "deploy_keys"].flatMap(segment => [
				[`GET /projects/:id/${segment}`, "keys.list"],
				[`POST /projects/:id/${segment}`, "keys.create"],
				[`GET /projects/:id/${segment}/:key_id`, "keys.get"],
				[`DELETE /projects/:id/${segment}/:key_id`, "keys.remove"],
				[`POST /projects/:id/${segment}/:key_id/enable`, "keys.enable"],
				[`DELETE /projects/:id/${segment}/:key_id/disable`, "keys.disable"],
			]),
		),
	},
};
