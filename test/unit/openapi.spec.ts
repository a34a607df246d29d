/**
 * The OpenAPI generator, pure: fastest-validator rules as JSON Schema, and a document built from
 * route tables and action definitions, so that a route added to a table is described without
 * touching the generator.
 */
import { buildOpenApi, type ActionDefinition } from "../../gateway/openapi";
import { isOptional, ruleSchema } from "../../gateway/openapi-rules";
import { routeTables } from "../../gateway/routes";
import { ok } from "../../gateway/routes/answers";
import type { RouteTable } from "../../gateway/routes/types";
import { object, string } from "../../presenters/json-schema";
import { loadActionSchemas } from "../support/routes";

describe("fastest-validator rules as JSON Schema", () => {
	it.each([
		["string", { type: "string" }],
		["string|optional|max:20", { type: "string", maxLength: 20 }],
		[
			{ type: "string", min: 1, max: 64 },
			{ type: "string", minLength: 1, maxLength: 64 },
		],
		[
			{ type: "string", pattern: /^[a-z]+$/ },
			{ type: "string", pattern: "^[a-z]+$" },
		],
		[
			{ type: "number", integer: true, positive: true, convert: true },
			{ type: "integer", exclusiveMinimum: 0, examples: [1], description: "A number; form fields and query strings are converted." },
		],
		[
			{ type: "number", min: 1, max: 1000 },
			{ type: "number", minimum: 1, maximum: 1000, examples: [1] },
		],
		// A real value as the example, never the bound Swagger UI would pick (9007199254740991).
		[
			{ type: "number", integer: true, min: 0, max: Number.MAX_SAFE_INTEGER },
			{ type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, examples: [1] },
		],
		[
			{ type: "number", integer: true, min: 5, max: 10 },
			{ type: "integer", minimum: 5, maximum: 10, examples: [5] },
		],
		[
			{ type: "number", integer: true, default: 20, min: 1, max: 100 },
			{ type: "integer", minimum: 1, maximum: 100, default: 20, examples: [20] },
		],
		[
			{ type: "boolean", optional: true, convert: true },
			{ type: "boolean", description: "true/false/1/0; form fields and query strings are converted." },
		],
		[{ type: "enum", values: ["a", "b"] }, { enum: ["a", "b"] }],
		[
			{ type: "array", items: "string", max: 5 },
			{ type: "array", items: { type: "string" }, maxItems: 5 },
		],
		[
			{ type: "object", props: { a: "number", b: { type: "string", optional: true } } },
			{ type: "object", properties: { a: { type: "number", examples: [1] }, b: { type: "string" } }, required: ["a"] },
		],
		[["string", "number"], { anyOf: [{ type: "string" }, { type: "number", examples: [1] }] }],
		[
			{ type: "string", nullable: true, default: "x" },
			{ type: ["string", "null"], default: "x" },
		],
		[{ type: "any", optional: true }, {}],
		[{ type: "custom", check: () => true }, {}],
	])("%j → %j", (rule, schema) => {
		expect(ruleSchema(rule)).toEqual(schema);
	});

	it("knows which parameters may be left out", () => {
		expect(isOptional("string|optional")).toBe(true);
		expect(isOptional({ type: "number", default: 20 })).toBe(true);
		expect(isOptional({ type: "string" })).toBe(false);
		expect(isOptional(["string", { type: "number", optional: true }])).toBe(true);
	});
});

describe("the document", () => {
	const schemas = loadActionSchemas();
	const lookup = (name: string): ActionDefinition | undefined => schemas[name];
	const build = (tables: RouteTable[], rateLimitPerMinute = 2000) => buildOpenApi(tables, { basePath: "/api/v3", action: lookup, rateLimitPerMinute }) as any;

	it("describes every alias of every table, under the gateway's base path", () => {
		const doc = build(routeTables);
		expect(doc.openapi).toBe("3.1.0");
		expect(doc.servers).toEqual([{ url: "/api/v3" }]);
		const operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map(m => `${m.toUpperCase()} ${p}`));
		const aliases = routeTables.flatMap(t =>
			(["api", "internal", "internalStream"] as const).flatMap(kind =>
				Object.keys(t[kind] ?? {}).map(a => {
					const [method, p] = a.split(/\s+/);
					return `${method} ${kind === "api" ? "" : "/internal"}${p.replace(/:(\w+)/g, "{$1}")}`;
				}),
			),
		);
		expect(operations.sort()).toEqual(aliases.sort());
		expect(new Set(Object.values(doc.paths).flatMap(ops => Object.values(ops as object).map((o: any) => o.operationId))).size).toBe(operations.length);
	});

	it("gives every route its success body: declared beside the alias, or by the alias function itself", () => {
		const doc = build(routeTables);
		const general = Object.entries(doc.paths).flatMap(([path, ops]) =>
			Object.entries(ops as Record<string, { responses: Record<string, { content?: object }> }>)
				.filter(([, op]) => !Object.entries(op.responses).some(([status, r]) => /^2\d\d$/.test(status) && r.content))
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		expect(general).toEqual([]);
		const labels = doc.paths["/projects/{id}/labels"];
		expect(labels.get.responses["200"].content["application/json"].schema).toEqual({
			type: "array",
			items: { $ref: "#/components/schemas/LabelWithCounts" },
		});
		expect(labels.post.responses["409"]).toEqual({ $ref: "#/components/responses/Conflict" });
		expect(doc.components.schemas.LabelWithCounts).toMatchObject({ type: "object", additionalProperties: false });
		expect(doc.paths["/projects/{id}/snippets/{snippet_id}/raw"].get.responses["200"].content).toEqual({
			"text/plain; charset=utf-8": { schema: { type: "string" } },
		});
	});

	it("refuses answers for an alias that is not routed, and two different schemas of one name", () => {
		const stray: RouteTable = { api: { "GET /widgets": "widgets.list" }, answers: { "GET /widget": ok(string) } };
		expect(() => build([stray])).toThrow("answers declared for aliases that are not routed: GET /widget");
		const twice: RouteTable = {
			api: { "GET /a": "widgets.a", "GET /b": "widgets.b" },
			answers: { "GET /a": ok(object({ a: string }, "Widget")), "GET /b": ok(object({ b: string }, "Widget")) },
		};
		expect(() => build([twice])).toThrow("two different schemas are named Widget");
	});

	it("keeps the general success of a route that declares only its refusals", () => {
		const table: RouteTable = { api: { "POST /widgets": "widgets.create" }, answers: { "POST /widgets": { 409: "Conflict" } } };
		const post = build([table]).paths["/widgets"].post;
		expect(post.responses["2XX"]).toMatchObject({ description: expect.stringContaining("Success") });
		expect(post.responses["409"]).toEqual({ $ref: "#/components/responses/Conflict" });
	});

	it("picks up a new route without any change to the generator", () => {
		const table: RouteTable = { api: { "GET /projects/:id/widgets/:widget_id": "widgets.get", "POST /projects/:id/widgets": "widgets.create" } };
		const widgets: Record<string, ActionDefinition> = {
			"widgets.get": { params: { id: "string", widget_id: { type: "number", integer: true, positive: true, convert: true } } },
			"widgets.create": {
				params: { id: "string", name: { type: "string", max: 50 }, shiny: { type: "boolean", optional: true } },
				auth: "optional",
				access: 30,
			},
		};
		const doc = buildOpenApi([...routeTables, table], { basePath: "/api/v3", action: n => widgets[n] ?? lookup(n), rateLimitPerMinute: 0 }) as any;
		const get = doc.paths["/projects/{id}/widgets/{widget_id}"].get;
		expect(get.tags).toEqual(["widgets"]);
		expect(get.parameters[1]).toMatchObject({ name: "widget_id", in: "path", required: true, schema: { type: "integer", exclusiveMinimum: 0 } });
		// A route that declares no answers gets a general success; its path's escapes may not decode (400),
		// and parameters in its URL may make the request's head too long (431).
		expect(Object.keys(get.responses).sort()).toEqual(["2XX", "400", "401", "403", "404", "431", "503"]);
		const create = doc.paths["/projects/{id}/widgets"].post;
		expect(create.requestBody.content["application/json"].schema).toEqual({
			type: "object",
			properties: { name: { type: "string", maxLength: 50 }, shiny: { type: "boolean" } },
			required: ["name"],
		});
		expect(create.security[0]).toEqual({});
		expect(create.description).toContain("Needs developer access");
		expect(create.responses["413"]).toEqual({ $ref: "#/components/responses/TooLarge" });
	});

	it("says so when no node offers an action, and still gives its path parameters", () => {
		const doc = buildOpenApi(routeTables, { basePath: "/api/v3", action: () => undefined, rateLimitPerMinute: 2000 }) as any;
		const op = doc.paths["/projects/{id}/labels"].post;
		expect(op.description).toContain("No node of the cluster offered this action");
		expect(op.parameters.map((p: any) => p.name)).toEqual(["id"]);
	});

	it("file downloads list their ranges, 304 and 416 beside the errors; an artifacts archive the bucket's redirect too", () => {
		const doc = build(routeTables);
		for (const file of ["artifacts", "trace"]) {
			const op = doc.paths[`/projects/{id}/builds/{build_id}/${file}`].get;
			const redirect = file === "artifacts" ? ["302"] : [];
			expect([file, Object.keys(op.responses).sort()]).toEqual([
				file,
				["200", "206", ...redirect, "304", "400", "401", "403", "404", "416", "429", "431", "503"],
			]);
			expect(op.responses["206"].description).toContain("Content-Range");
		}
		expect(doc.paths["/projects/{id}/builds/{build_id}/artifacts"].get.responses["302"].description).toContain("ARTIFACTS_S3_PROXY_DOWNLOAD=false");
	});

	it("internal routes take the shared secret, a streamed upload raw bytes; no 429 without a rate limit but for secrets and password hashes", () => {
		const doc = build(routeTables, 0);
		const upload = doc.paths["/internal/builds/{build_id}/artifacts"].put;
		expect(upload["x-moleculer-action"]).toBe("builds.authorizeArtifactsUpload");
		expect(upload.security).toEqual([{ sharedSecret: [] }]);
		expect(upload.requestBody.content).toEqual({ "application/octet-stream": {} });
		expect(upload.responses["401"]).toEqual({ $ref: "#/components/responses/WrongSecret" });
		const limited = Object.entries(doc.paths).flatMap(([path, ops]) =>
			Object.entries(ops as Record<string, { responses: object }>)
				.filter(([, op]) => JSON.stringify(op.responses).includes("RateLimited"))
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		expect(limited.sort()).toEqual(["POST /session", "POST /users"]);
		expect(upload.responses["429"]).toEqual({ $ref: "#/components/responses/SecretGuessing" });
	});
});
