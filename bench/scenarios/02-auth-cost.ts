/**
 * 2. Auth cost: the same `GET /projects/:id/labels` with a token the gateway has seen (its
 * token → user and project → access look-ups are cached) against the first request of a token
 * never used before (both look-ups miss the cache and read the store). One request at a time,
 * so the figures are latencies, not queueing; in the split deployment each miss is also a NATS
 * round trip to accounts.
 */
import type { BenchContext, Row, Scenario } from "../scenario";
import type { StackOptions } from "../support/stack";
import type { LoadResult } from "../support/load";

const CASES: [string, StackOptions][] = [
	["all-in-one", { nodes: { all: "" } }],
	["split over NATS, Redis cacher", { nodes: { api: "api", accounts: "accounts", labels: "labels" }, nats: true, redis: true }],
];

function checked(what: string, result: LoadResult, expected: number): LoadResult {
	if (result.errors || result.non2xx || result.requests !== expected)
		throw new Error(
			`${what}: ${result.requests}/${expected} answered, ${result.errors} errors, ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodes)})`,
		);
	return result;
}

const scenario: Scenario = {
	name: "auth cost",
	description: "a cached token vs the first request of a new token, one request at a time",
	async run(ctx: BenchContext): Promise<Row[]> {
		const tokens = ctx.quick ? 30 : 150;
		const rows: Row[] = [];
		for (const [name, options] of CASES) {
			ctx.log(`starting ${name}; creating ${tokens} users (scrypt makes this the slow part)`);
			const stack = await ctx.startStack(options);
			// Internal: every signed-in user reads it, so a new user's first request needs no membership.
			const project = (await stack.expect(201, "POST", "/projects", { json: { name: "bench-auth", visibility_level: 10 } })).body;
			await stack.waitForRoute(`/projects/${project.id}/labels`);
			for (let i = 0; i < 20; i++) await stack.expect(200, "POST", `/projects/${project.id}/labels`, { json: { name: `label-${i}`, color: "#428bca" } });
			const fresh: string[] = [];
			for (let i = 0; i < tokens; i++) {
				const username = `bench${i}`;
				const password = "bench-password";
				await stack.expect(201, "POST", "/users", { json: { username, name: `Bench ${i}`, email: `${username}@example.com`, password } });
				const session = await stack.expect(201, "POST", "/session", { token: undefined, json: { login: username, password } });
				fresh.push(session.body.private_token);
			}
			// Creating users cleaned the access caches; warm the one token the cached case uses.
			const url = stack.url + `/projects/${project.id}/labels`;
			const cachedToken = stack.rootToken;
			await stack.expect(200, "GET", `/projects/${project.id}/labels`, { token: cachedToken });

			ctx.log(`${name}: ${tokens} requests with a cached token, then ${tokens} first requests of new tokens`);
			const cached = checked(
				"cached token",
				await ctx.load({ url, headers: { "PRIVATE-TOKEN": cachedToken }, connections: 1, amount: tokens, warmup: 0 }),
				tokens,
			);
			let next = 0;
			const firstUse = checked(
				"new tokens",
				await ctx.load({
					url,
					connections: 1,
					amount: tokens,
					warmup: 0,
					setupRequest: req => ({ ...req, headers: { ...req.headers, "PRIVATE-TOKEN": fresh[next++ % fresh.length] } }),
				}),
				tokens,
			);
			if (next < tokens) throw new Error(`only ${next} of ${tokens} new tokens were sent`);
			await stack.stop();
			rows.push({
				case: `${name}: first request of a new token`,
				metric: "latency ms @ c=1",
				value: firstUse.latency,
				baseline: "same request, cached token",
				baselineValue: cached.latency,
				better: "lower",
				extra: { requests: tokens },
			});
		}
		return rows;
	},
};

export default scenario;
