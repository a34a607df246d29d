/**
 * The edge decision (gateway/edge/edge-pipeline.ts), run by both its drivers over the same pieces the
 * gateway makes (token look-ups, the broker's in-memory cache and validator, in-memory counters):
 * the usual way decides every request; the at-once way answers only what it can from what the
 * process holds, and then exactly as the usual way does, and leaves everything else, refusals
 * included, to the usual way. Other services' answers come from `call`, which stands for them.
 */
import type { IncomingMessage, ServerResponse } from "http";
import { ServiceBroker, Validators } from "moleculer";
import { RecentTokens } from "../../../../gateway/edge/auth";
import { CacheReads } from "../../../../lib/cache/cache-reads";
import { decide, decideNow, type EdgeAction, type EdgePieces, type EdgeRequest } from "../../../../gateway/edge/edge-pipeline";
import { EdgeValidator } from "../../../../gateway/edge/edge-validation";
import { ACCESS_LOOKUP, accessLookupParams } from "../../../../gateway/edge/project-route";
import { RequestLimits } from "../../../../gateway/edge/rate-limit";
import type { Caller, ProjectAccess } from "../../../../lib/accounts/access";
import { RESOLVE_TOKEN } from "../../../../lib/accounts/auth-cache";
import { notFound } from "../../../../lib/api/errors";
import { hashToken } from "../../../../lib/crypto/tokens";

const broker = new ServiceBroker({ logger: false, cacher: { type: "MemoryLRU", options: { max: 100 } } });
afterAll(() => broker.stop());

const OWNER: Caller = { id: 7, username: "ada", is_admin: false };
const TOKEN = "AbCdEfGhIjKlMnOpQrSt";
const ACCESS: ProjectAccess = {
	project: { id: 3, path_with_namespace: "ada/demo", visibility_level: 0, public_builds: true, creator_id: 7 },
	level: 30,
	admin: false,
};
const LIST: EdgeAction = {
	name: "labels.list",
	cache: { keys: ["#projectKey", "page"] },
	params: { id: "string", page: { type: "number", convert: true, optional: true } },
};
const MASTERS_ONLY: EdgeAction = { ...LIST, name: "keys.list", access: 40 };
const OPTIONAL: EdgeAction = { ...LIST, name: "snippets.list", auth: "optional" };
const PROJECT_ROUTE = { path: "projects/:id/labels" };

function pieces(perMinute = 100): EdgePieces {
	const cacheReads = new CacheReads(broker.cacher as never);
	return {
		cacheReads,
		recentTokens: new RecentTokens(hash => cacheReads.keyOf({ name: RESOLVE_TOKEN.action, cache: RESOLVE_TOKEN.cache }, { tokenHash: hash }, {})),
		edgeValidator: new EdgeValidator(new Validators.Fastest() as never),
		limits: new RequestLimits(null, { prefix: `edge-${Math.random()}`, perMinute, authFailures: 5 }),
	};
}

function request(opts: { token?: string; headers?: Record<string, string>; action?: EdgeAction; params?: Record<string, unknown> } = {}): EdgeRequest {
	const headers: Record<string, string> = { ...(opts.token ? { "private-token": opts.token } : {}), ...opts.headers };
	return {
		http: { headers } as IncomingMessage,
		alias: PROJECT_ROUTE,
		action: opts.action ?? LIST,
		params: opts.params ?? { id: "3" },
		meta: { clientAddress: "192.0.2.1" },
		readsCache: true,
	};
}

/** What the other services answer: the token's owner and the project access; `calls` lists what was asked. */
function services() {
	const calls: string[] = [];
	const call = <T>(action: string, params: object): Promise<T> => {
		calls.push(action);
		if (action === RESOLVE_TOKEN.action)
			return (params as { tokenHash: string }).tokenHash === hashToken(TOKEN)
				? Promise.resolve(OWNER as T)
				: Promise.reject(Object.assign(new Error("401"), { code: 401 }));
		if (action === ACCESS_LOOKUP.name) return Promise.resolve(ACCESS as T);
		return Promise.reject(new Error(`unexpected call of ${action}`));
	};
	const headers = new Map<string, unknown>();
	const res = { headersSent: false, setHeader: (name: string, value: unknown) => headers.set(name, value) } as unknown as ServerResponse;
	return { calls, way: { res, call, encodedHits: false }, headers };
}

/** Puts the project access and the list's answer where the services would have left them. */
async function cacheAnswers(edge: EdgePieces, answer: object) {
	await broker.cacher!.set(edge.cacheReads.keyOf(ACCESS_LOOKUP, accessLookupParams("3", OWNER), {})!, ACCESS);
	await broker.cacher!.set(edge.cacheReads.keyOf(LIST, { id: "3" }, { projectKey: "3" })!, answer);
}

beforeEach(() => broker.cacher!.clean());

it("decides a request the usual way: the caller, the access, the parameters converted, the cached answer, the count", async () => {
	const edge = pieces();
	const answer = [{ name: "bug" }];
	await cacheAnswers(edge, answer);
	const { calls, way, headers } = services();
	const req = request({ token: TOKEN, params: { id: "3", page: "2" } });
	await expect(decide(edge, { ...req, params: { id: "3" } }, way)).resolves.toBe(answer);
	expect(calls).toEqual([RESOLVE_TOKEN.action]);
	expect(headers.get("RateLimit-Remaining")).toBe("99");

	await expect(decide(edge, req, way)).resolves.toBeUndefined(); // page 2 is not in the cache
	expect(req.params).toEqual({ id: "3", page: 2 });
	expect(req.meta).toEqual({ clientAddress: "192.0.2.1", user: OWNER, access: ACCESS, projectKey: "3" });
	expect(calls).toEqual([RESOLVE_TOKEN.action]); // the owner is kept now
});

it("decides at once only what the process holds, with the usual way's answer, and counts nothing itself", async () => {
	const edge = pieces();
	const answer = [{ name: "bug" }];
	expect(decideNow(edge, request({ token: TOKEN }))).toBeUndefined(); // the owner is not known yet
	const { way } = services();
	await decide(edge, request({ token: TOKEN }), way);
	expect(decideNow(edge, request({ token: TOKEN }))).toBeUndefined(); // the answer is not in the cache
	await cacheAnswers(edge, answer);
	const now = request({ token: TOKEN });
	expect(decideNow(edge, now)).toEqual({ cached: answer, countKey: "u:7" });
	expect(now.meta).toEqual({ clientAddress: "192.0.2.1", user: OWNER, access: ACCESS, projectKey: "3" });
	await expect(decide(edge, request({ token: TOKEN }), way)).resolves.toBe(answer);
});

it("leaves every refusal to the usual way, which gives it", async () => {
	const edge = pieces();
	await cacheAnswers(edge, [{ name: "bug" }]);
	const { way } = services();
	await decide(edge, request({ token: TOKEN }), way);
	const refused: [string, EdgeRequest, object][] = [
		["a level too low", request({ token: TOKEN, action: MASTERS_ONLY }), { code: 403 }],
		["parameters that do not fit", request({ token: TOKEN, params: { id: "3", page: "two" } }), { name: "ValidationError" }],
		["a ref that names no project", request({ token: TOKEN, params: { id: "" } }), { code: 404 }],
		["no token", request(), { code: 401 }],
		["a made-up token", request({ token: "made-up-token-000000" }), { code: 401 }],
	];
	for (const [what, req, error] of refused) {
		expect([what, decideNow(edge, { ...req, meta: { ...req.meta } })]).toEqual([what, undefined]);
		await expect(decide(edge, req, way)).rejects.toMatchObject(error);
	}
});

it("never decides a sudo at once; the usual way asks the admin's right first", async () => {
	const edge = pieces();
	const { way } = services();
	await decide(edge, request({ token: TOKEN }), way);
	const sudo = request({ token: TOKEN, headers: { sudo: "root" } });
	expect(decideNow(edge, sudo)).toBeUndefined();
	await expect(decide(edge, sudo, way)).rejects.toMatchObject({ code: 403, message: "403 Forbidden  - Must be admin to use sudo" });
});

it("answers anonymous callers only where the action allows them, counted against their address", async () => {
	const edge = pieces(2);
	const { way, calls } = services();
	const anonymous = request({ action: OPTIONAL });
	await expect(decide(edge, anonymous, way)).resolves.toBeUndefined();
	expect(anonymous.meta.user).toBeNull();
	// A made-up token counts against the address too: the third request of the address is one too many.
	await expect(decide(edge, request({ token: "made-up-token-000000" }), way)).rejects.toMatchObject({ code: 401 });
	await expect(decide(edge, request({ action: OPTIONAL }), way)).rejects.toMatchObject({ code: 429 });
	expect(calls).toEqual([ACCESS_LOOKUP.name, RESOLVE_TOKEN.action]);
});

it("tells an anonymous caller of a project it may not read 404 on v4 (GitLab's v4), and asks it to sign in on v3 (GitLab 8.16)", async () => {
	const edge = pieces();
	const { way: usual } = services();
	// accounts finds no project this caller may read: its 404 is the answer.
	const way = { ...usual, call: <T>() => Promise.reject<T>(notFound("Project")) };
	const on = (path: string, over: Partial<EdgeRequest> = {}, params: Record<string, unknown> = { id: "3" }) => ({
		...request({ action: OPTIONAL, params }),
		alias: { path },
		...over,
	});
	await expect(decide(edge, on("/v4/projects/:id/labels"), way)).rejects.toMatchObject({ code: 404, message: "404 Project Not Found" });
	await expect(decide(edge, on("/v3/projects/:id/snippets"), way)).rejects.toMatchObject({ code: 401 });
	// A ref that names no project: the same answers, without a look-up.
	await expect(decide(edge, on("/v4/projects/:id/labels", {}, { id: "x".repeat(300) }), way)).rejects.toMatchObject({
		code: 404,
		message: "404 Project Not Found",
	});
	await expect(decide(edge, on("/v3/projects/:id/snippets", {}, { id: "x".repeat(300) }), way)).rejects.toMatchObject({ code: 401 });
	// Where no token is allowed, none is a 401 on either version.
	await expect(decide(edge, on("/v4/projects/:id/labels", { action: LIST }), way)).rejects.toMatchObject({ code: 401 });
	// A download has no action: its grant's `auth` lets the anonymous caller through to the project's look-up.
	const download = on("/v4/projects/:id/jobs/:job_id/artifacts", { action: undefined });
	await expect(decide(edge, download, way)).rejects.toMatchObject({ code: 401 });
	await expect(decide(edge, { ...download, grantAuth: "optional" }, way)).rejects.toMatchObject({ code: 404, message: "404 Project Not Found" });
	const readable = { ...download, grantAuth: "optional", meta: { clientAddress: "192.0.2.9" } };
	await expect(decide(edge, readable, services().way)).resolves.toBeUndefined();
	expect(readable.meta).toMatchObject({ user: null, access: ACCESS });
});

it("gives a 429 before any other answer, and calls nothing past the limit", async () => {
	const edge = pieces(1);
	const { way, calls } = services();
	await decide(edge, request({ token: TOKEN }), way);
	calls.length = 0;
	for (const req of [request({ token: TOKEN }), request({ token: TOKEN, params: { id: "" } }), request({ token: TOKEN, action: MASTERS_ONLY })])
		await expect(decide(edge, req, way)).rejects.toMatchObject({ code: 429 });
	expect(calls).toEqual([]);
});
