import { DELETED_DEPLOY_KEY, DEPLOY_KEY } from "../../presenters/deploy-key";
import { arrayOf } from "../../presenters/json-schema";
import { created, ok, type Answers } from "./answers";
import type { RouteTable } from "./types";

/** A key changed by another request meanwhile, again and again: 409. */
const RACED = { 409: "Conflict" } as const;

/**
 * Deploy keys under both paths: `keys` (8.0+) and `deploy_keys` (8.6+, what later clients send),
 * with 8.11's enable and disable; and every key of the instance, for admins.
 */
export const deployKeysRoutes: RouteTable = {
	api: {
		"GET /deploy_keys": "deploy-keys.listAll",
		...Object.fromEntries(
			["keys", "deploy_keys"].flatMap(segment => [
				[`GET /projects/:id/${segment}`, "deploy-keys.list"],
				[`POST /projects/:id/${segment}`, "deploy-keys.create"],
				[`GET /projects/:id/${segment}/:key_id`, "deploy-keys.get"],
				[`DELETE /projects/:id/${segment}/:key_id`, "deploy-keys.remove"],
				[`POST /projects/:id/${segment}/:key_id/enable`, "deploy-keys.enable"],
				[`DELETE /projects/:id/${segment}/:key_id/disable`, "deploy-keys.disable"],
			]),
		),
	},
	answers: {
		"GET /deploy_keys": { ...ok(arrayOf(DEPLOY_KEY)), 403: "Forbidden" },
		...Object.fromEntries(
			["keys", "deploy_keys"].flatMap((segment): [string, Answers][] => [
				[`GET /projects/:id/${segment}`, ok(arrayOf(DEPLOY_KEY))],
				// A key that does not parse, or one another project has and the caller cannot reach: 400.
				[`POST /projects/:id/${segment}`, { ...created(DEPLOY_KEY), ...RACED, 400: "RuleRefusal" }],
				[`GET /projects/:id/${segment}/:key_id`, ok(DEPLOY_KEY)],
				[`DELETE /projects/:id/${segment}/:key_id`, { ...ok(DELETED_DEPLOY_KEY), ...RACED }],
				[`POST /projects/:id/${segment}/:key_id/enable`, { ...created(DEPLOY_KEY), ...RACED }],
				[`DELETE /projects/:id/${segment}/:key_id/disable`, { ...ok(DEPLOY_KEY), ...RACED }],
			]),
		),
	},
};
