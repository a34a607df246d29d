/**
 * No request can end the gateway's process (docs/architecture.md#the-guarded-entry): routes planted
 * in the gateway's route table fail every way a route can — an alias function that throws, one whose
 * promise rejects after the answer has started (moleculer-web ignores what an alias function
 * returns), an action that throws, and a cached answer that cannot be encoded, which fails on the
 * fast path of a cached GET before moleculer-web has the request — and each is answered
 * `500 {"message":"500 Internal Server Error"}`, logged with the request id the answer carries, while
 * the gateway goes on serving.
 */
import type { Service } from "moleculer";
import { gatewayRoutes } from "../../../gateway/api-routes";
import { trustedProxyList } from "../../../gateway/server/client-address";
import { routeTables } from "../../../gateway/routes";
import type { AliasFunction } from "../../../gateway/server/routing";
import type { RouteTable } from "../../../gateway/routes/types";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import { startLocal, type LocalStack } from "../../support/broker";

/** An answer that throws when it is encoded: kept as it is by the in-memory cache, so it fails again on every hit. */
const unencodable = () => ({ toJSON: () => (null as unknown as { fails(): string }).fails() });

const throws: AliasFunction = () => {
	throw new TypeError("planted: thrown");
};
const rejectsLater: AliasFunction = async (req, res) => {
	await new Promise(resolve => setImmediate(resolve));
	throw new TypeError(`planted: rejected, ${res.headersSent ? "after" : "before"} the answer started`);
};

const planted: RouteTable = {
	api: {
		"GET /planted/throws": throws,
		"GET /planted/rejects": rejectsLater,
		"GET /planted/action": "planted.fails",
		"GET /planted/cached": "planted.unencodable",
	},
};

const PlantedService = {
	name: "planted",
	actions: {
		fails: {
			handler() {
				throw new TypeError("planted: the action failed");
			},
		},
		unencodable: { cache: true, handler: unencodable },
	},
};

const Gateway = { ...ApiService, settings: { ...ApiService.settings, routes: gatewayRoutes(trustedProxyList([]), [...routeTables, planted]) } };

let stack: LocalStack;
let errors: unknown[][];

beforeAll(async () => {
	stack = await startLocal([Gateway, AccountsService, PlantedService], { cacher: { type: "MemoryLRU", options: { max: 100 } } });
	const gateway: Service = stack.broker.getLocalService("api");
	errors = jest.spyOn(gateway.logger, "error").mockImplementation(() => undefined).mock.calls;
});
afterAll(() => stack?.stop());

// The log names the route (under its API version), or the path when the failure came before moleculer-web had the request.
it.each([
	["an alias function that throws", "/planted/throws", "v3/planted/throws", "planted: thrown"],
	["an alias function whose promise rejects", "/planted/rejects", "v3/planted/rejects", "planted: rejected, before the answer started"],
	["an action that throws", "/planted/action", "v3/planted/action", "planted: the action failed"],
	["a cached answer that cannot be encoded, the usual way", "/planted/cached", "v3/planted/cached", "Cannot read properties of null"],
	["the same answer from the cache, on the fast path", "/planted/cached", "/api/v3/planted/cached", "Cannot read properties of null"],
])("%s: 500 in GitLab's words, logged with the request id, and the gateway goes on", async (_what, path, where, cause) => {
	errors.length = 0;
	const answer = await stack.api().get(path);
	expect([answer.status, answer.body]).toEqual([500, { message: "500 Internal Server Error" }]);
	const id = answer.headers.get("x-request-id");
	expect(id).toMatch(/^[0-9a-f-]{36}$/);
	expect(errors).toHaveLength(1);
	expect(errors[0][0]).toBe(`Unexpected error on GET ${where} (request ${id}):`);
	expect(String(errors[0][1])).toContain(cause);
	expect((await stack.api().get("/user")).status).toBe(200);
});
