/**
 * The route index (gateway/server/route-index.ts) finds what moleculer-web's own `resolveAlias` finds: the
 * same first alias, the same parameters, the same decoding error, on moleculer-web's real aliases
 * (its `Alias` class, path-to-regexp's patterns) and on the gateway's whole route table.
 */
import fc from "fast-check";
import ApiGateway from "moleculer-web";
import { gatewayRoutes } from "../../../../gateway/api-routes";
import { trustedProxyList } from "../../../../gateway/server/client-address";
import { RouteIndex, type IndexedAlias } from "../../../../gateway/server/route-index";
import { API_ROOT } from "../../../../gateway/routes";
import { fuzzSeed } from "../../../support/fuzz-seed";

// moleculer-web's alias class, as its routes make them (not in its typings).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Alias = require("moleculer-web/src/alias") as new (service: object, route: object, opts: string, action: string) => IndexedAlias;

/** moleculer-web's own resolution: every alias in turn. */
const linear = (ApiGateway.methods as { resolveAlias: (this: { aliases: IndexedAlias[] }, url: string, method: string) => unknown }).resolveAlias;

type Outcome = { alias?: IndexedAlias; params?: unknown; error?: string } | false;

function outcome(resolve: () => unknown): Outcome {
	try {
		const found = resolve() as { alias: IndexedAlias; params: unknown } | false;
		return found && { alias: found.alias, params: found.params };
	} catch (err) {
		return { error: `${(err as Error).name}: ${(err as Error).message}` };
	}
}

function aliasesOf(route: { path: string; opts?: object }, table: Record<string, string>): IndexedAlias[] {
	const full = { path: route.path, opts: route.opts ?? {} };
	return Object.entries(table).map(([path, action]) => new Alias({}, full, path, action));
}

/** moleculer-web's own order (the most segments first), as it sorts a route table. */
function inMoleculerWebOrder(aliases: IndexedAlias[]): IndexedAlias[] {
	(ApiGateway.methods as { optimizeAliasesOrder(this: { aliases: IndexedAlias[] }): void }).optimizeAliasesOrder.call({ aliases });
	return aliases;
}

/** How many patterns a resolution tries. */
function patternsTried(aliases: IndexedAlias[], resolve: () => unknown): number {
	let tried = 0;
	const spies = aliases.map(alias => {
		const match = alias.match.bind(alias);
		alias.match = url => {
			tried++;
			return match(url);
		};
		return () => delete (alias as { match?: unknown }).match;
	});
	resolve();
	for (const restore of spies) restore();
	return tried;
}

/** What both resolutions answer for each method and URL: equal, or the test says where they differ. */
function expectSameAnswers(aliases: IndexedAlias[], urls: string[], methods: string[]) {
	const index = new RouteIndex();
	let matched = 0;
	for (const method of methods)
		for (const url of urls) {
			const expected = outcome(() => linear.call({ aliases }, url, method));
			const got = outcome(() => index.resolve(aliases, url, method));
			expect({ method, url, found: got }).toEqual({ method, url, found: expected });
			if (got && got.alias) {
				expect(got.alias).toBe((expected as { alias: IndexedAlias }).alias);
				matched++;
			}
		}
	return matched;
}

const MANY_SHAPES = {
	"GET /projects/:id/labels": "labels.list",
	"POST /projects/:id/labels": "labels.create",
	"GET /projects/:id/labels/:name": "labels.show",
	"GET /projects/:id/:what": "catch.what",
	"GET /projects/starred": "projects.starred",
	"GET /projects/:id": "projects.show",
	"GET /projects": "projects.list",
	"* /projects/:id/hooks": "hooks.any",
	"GET /files/list": "files.list",
	"GET /files/*path": "files.wild",
	"GET /files/:name.zip": "files.zip",
	"GET /opt{/:part}": "opt.group",
	"GET /a/b/c/d/e": "deep.literal",
	"GET /a/:b/c/d/:e": "deep.params",
	"GET /:anything/b/c": "root.param",
	"GET /user": "user.show",
	"GET /": "root.show",
};

const URLS = [
	"/api/v3/projects/1/labels",
	"/api/v3/projects/1/labels/",
	"/API/V3/Projects/1/LABELS",
	"/api/v3/projects/1/labels/bug",
	"/api/v3/projects/1/labels/%62ug",
	"/api/v3/projects/%ZZ/labels",
	"/api/v3/projects/1/labels/%C3%28",
	"/api/v3/projects/1/hooks",
	"/api/v3/projects/1/builds",
	"/api/v3/projects/starred",
	"/api/v3/projects/1",
	"/api/v3/projects",
	"/api/v3/projects/",
	"/api/v3/projects//labels",
	"/api/v3/projects/1/labels//",
	"/api/v3/files/a/b/c.zip",
	"/api/v3/files/c.zip",
	"/api/v3/opt",
	"/api/v3/opt/x",
	"/api/v3/a/b/c/d/e",
	"/api/v3/a/x/c/d/y",
	"/api/v3/a/b/c",
	"/api/v3/z/b/c",
	"/api/v3/user",
	"/api/v3",
	"/api/v3/",
	"/api",
	"/",
	"",
	"/nothing/here",
	"/api/v4/projects/1/labels",
];

it("finds the same first alias as moleculer-web for every shape path-to-regexp reads", () => {
	const aliases = inMoleculerWebOrder([
		...aliasesOf({ path: "/api/v3" }, MANY_SHAPES),
		...aliasesOf({ path: "/api/v4", opts: { pathToRegexpOptions: { sensitive: true } } }, { "GET /projects/:id/labels": "v4.labels" }),
	]);
	expect(expectSameAnswers(aliases, URLS, ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND"])).toBe(32);
});

it("finds the same route as moleculer-web on the gateway's whole table, v3 and v4", () => {
	const routes = gatewayRoutes(trustedProxyList([]));
	const aliases = inMoleculerWebOrder(routes.flatMap(route => aliasesOf({ path: API_ROOT + route.path }, route.aliases as Record<string, string>)));
	const urls = aliases.flatMap(alias => {
		const path = alias.fullPath!;
		return [
			path.replace(/:[A-Za-z_]+/g, "1"),
			path.replace(/:[A-Za-z_]+/g, "a%2Fb"),
			`${path.replace(/:[A-Za-z_]+/g, "x")}/`,
			path.replace(/:[A-Za-z_]+/g, "%ZZ"),
			path.toUpperCase().replace(/:[A-Z_]+/g, "7"),
			`${path.replace(/:[A-Za-z_]+/g, "1")}/extra`,
			path.split("/").slice(0, -1).join("/"),
		];
	});
	expect(aliases.length).toBeGreaterThan(100);
	const matched = expectSameAnswers(aliases, urls, ["GET", "POST", "PUT", "DELETE", "PATCH"]);
	expect(matched).toBeGreaterThan(aliases.length);

	// What the index is for: a labels list tries a few patterns, not the whole table.
	const index = new RouteIndex();
	for (const url of ["/api/v3/projects/1/labels", "/api/v4/projects/1/labels"]) {
		expect(patternsTried(aliases, () => index.resolve(aliases, url, "GET"))).toBe(1);
		expect(patternsTried(aliases, () => linear.call({ aliases }, url, "GET"))).toBeGreaterThan(20);
	}
});

it("finds the same route as moleculer-web for paths made of the table's own words", () => {
	const aliases = inMoleculerWebOrder(
		gatewayRoutes(trustedProxyList([])).flatMap(route => aliasesOf({ path: API_ROOT + route.path }, route.aliases as Record<string, string>)),
	);
	const value = fc.oneof(fc.constantFrom("1", "x", "%41", "%ZZ", "a.b", "labels", "artifacts"), fc.string({ minLength: 1, maxLength: 4 }));
	// A route's own path, its parameters given values, then changed: cases, segments added or cut, a trailing slash.
	const path = fc
		.tuple(
			fc.constantFrom(...aliases.map(alias => alias.fullPath!)),
			fc.array(value, { minLength: 4, maxLength: 4 }),
			fc.nat(6),
			fc.boolean(),
			fc.boolean(),
		)
		.map(([template, values, change, upper, slash]) => {
			let url = template.replace(/[:*][A-Za-z_]+/g, () => values[Math.floor(values.length / 2)]);
			if (upper) url = url.toUpperCase();
			const segments = url.split("/");
			if (change === 1) segments.push(values[0]);
			if (change === 2) segments.pop();
			if (change === 3) segments.splice(2, 0, values[1]);
			if (change === 4) segments[segments.length - 1] = values[2];
			return segments.join("/") + (slash ? "/" : "");
		});
	const index = new RouteIndex();
	fc.assert(
		fc.property(path, fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"), (url, method) => {
			expect(outcome(() => index.resolve(aliases, url, method))).toEqual(outcome(() => linear.call({ aliases }, url, method)));
		}),
		{ seed: fuzzSeed(), numRuns: 3000 },
	);
});

it("makes its index again when moleculer-web makes a new table, and keeps no index for made-up methods", () => {
	const index = new RouteIndex();
	const first = aliasesOf({ path: "/api/v3" }, { "GET /projects/:id/labels": "labels.list" });
	expect(index.resolve(first, "/api/v3/projects/1/labels", "GET")).toMatchObject({ params: { id: "1" } });
	const next = aliasesOf({ path: "/api/v3" }, { "GET /projects/:id/labels": "labels.v2", "GET /projects/:id/labels/:name": "labels.show" });
	expect(index.resolve(next, "/api/v3/projects/1/labels", "GET")).toMatchObject({ alias: { action: "labels.v2" } });
	// The same array, changed in place: found again too.
	next.push(...aliasesOf({ path: "/api/v3" }, { "GET /projects/:id/keys": "keys.list" }));
	expect(index.resolve(next, "/api/v3/projects/1/keys", "GET")).toMatchObject({ alias: { action: "keys.list" } });
	for (let i = 0; i < 100; i++) expect(index.resolve(next, "/api/v3/projects/1/keys", `MADE-UP-${i}`)).toBe(false);
	expect((index as unknown as { methods: Map<string, unknown> }).methods.size).toBeLessThanOrEqual(16);
});
