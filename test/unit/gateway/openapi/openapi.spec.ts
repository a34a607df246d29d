/**
 * The OpenAPI generator, pure: fastest-validator rules as JSON Schema, and a document built from
 * route tables and action definitions, so that a route added to a table is described without
 * touching the generator.
 */
import { buildOpenApi } from "../../../../gateway/openapi/openapi";
import type { ActionDefinition } from "../../../../gateway/openapi/types";
import { isOptional, ruleSchema } from "../../../../gateway/openapi/openapi-rules";
import { routeTables, v4RouteTables } from "../../../../gateway/routes";
import { ok } from "../../../../gateway/routes/answers";
import type { RouteTable } from "../../../../gateway/routes/types";
import { object, string } from "../../../../presenters/json-schema";
import { NEW_BUILD_SCHEMA } from "../../../../lib/builds/build-input";
import { loadActionSchemas } from "../../../support/routes";

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
		// What fastest-validator's conversion takes besides true and false.
		[
			{ type: "boolean", optional: true, convert: true },
			{
				anyOf: [{ type: "boolean" }, { enum: [1, 0, "true", "false", "1", "0", "on", "off"] }],
				description: "true/false/1/0/on/off; form fields and query strings are converted.",
			},
		],
		// A pattern spelt out as JavaScript reads it (lib/api/schema-pattern.ts).
		[
			{ type: "string", pattern: /^\d+\s?$/ },
			{ type: "string", pattern: "^[0-9]+[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]?$" },
		],
		// What the service checks beyond the rule is added; a value it reads itself is described whole.
		[
			{ type: "string", max: 1024, openapi: { maxLength: 255, pattern: "^a" } },
			{ type: "string", maxLength: 255, pattern: "^a" },
		],
		[
			{ type: "any", openapi: { type: "integer", minimum: 0 } },
			{ type: "integer", minimum: 0 },
		],
		[{ type: "enum", values: ["a", "b"] }, { enum: ["a", "b"] }],
		[
			{ type: "array", items: "string", max: 5 },
			{ type: "array", items: { type: "string" }, maxItems: 5 },
		],
		[
			{ type: "object", props: { a: "number", b: { type: "string", optional: true } } },
			// An optional field takes null too: the validator lets it through as not sent.
			{ type: "object", properties: { a: { type: "number", examples: [1] }, b: { type: ["string", "null"] } }, required: ["a"] },
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
		// Every alias, and besides them only literal paths an alias answers (an integration's PUT under its slug, with its GET and DELETE).
		const template = (alias: string) => {
			const [method, path] = alias.split(" ");
			return new RegExp(`^${method} ${path.replace(/\{\w+\}/g, "[^/]+")}$`);
		};
		expect(operations.filter(op => !aliases.includes(op) && !aliases.some(a => template(a).test(op)))).toEqual([]);
		expect(aliases.filter(a => !operations.includes(a))).toEqual([]);
		expect(operations.filter(op => op.includes("/services/") && !op.includes("{slug}")).length).toBe(3 * 20);
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
		expect(() => build([stray])).toThrow("answers or takes declared for aliases that are not routed: GET /widget");
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
		// The fields the route reads, and no other (GitLab ignores any other).
		expect(create.requestBody.content["application/json"].schema).toEqual({
			type: "object",
			properties: { name: { type: "string", maxLength: 50 }, shiny: { type: ["boolean", "null"] } },
			required: ["name"],
			additionalProperties: false,
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

describe("the v4 document", () => {
	const schemas = loadActionSchemas();
	const doc = buildOpenApi(v4RouteTables, { basePath: "/api/v4", action: name => schemas[name], rateLimitPerMinute: 0 }) as any;
	const param = (op: any, name: string) => op.parameters.find((p: any) => p.name === name);

	it("gives every route its success: a declared status, with its body's schema unless it is a 204", () => {
		const lacking = Object.entries(doc.paths).flatMap(([path, ops]) =>
			Object.entries(ops as Record<string, { responses: Record<string, { content?: object }> }>)
				.filter(([, op]) => {
					const successes = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
					return !successes.length || successes.some(([status, r]) => status !== "204" && !r.content);
				})
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		expect(lacking).toEqual([]);
		expect(doc.paths["/projects/{id}/labels/{label_id}"].delete.responses["204"]).toEqual({ description: "Done: no content." });
		expect(doc.paths["/projects/{id}/jobs/{job_id}"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Job" });
	});

	it("takes ids as numbers where the service does, and states the label's rules", () => {
		expect(param(doc.paths["/projects/{id}/jobs/{job_id}"].get, "job_id").schema).toEqual({
			type: "integer",
			minimum: 0,
			maximum: Number.MAX_SAFE_INTEGER,
		});
		expect(param(doc.paths["/projects/{id}/pipelines/{pipeline_id}"].get, "pipeline_id").schema.type).toBe("integer");
		const create = doc.paths["/projects/{id}/labels"].post.requestBody.content["application/json"].schema;
		expect(create.required).toEqual(["name", "color"]);
		expect(create.properties.name).toMatchObject({ type: "string", maxLength: 255, pattern: expect.stringContaining("[^,") });
		expect(create.properties.color.pattern).toContain("[0-9A-Fa-f]{6}");
	});

	it("has the artifacts by ref under real path templates, with their required `job`", () => {
		for (const path of ["/projects/{id}/jobs/artifacts/{ref_name}/download", "/projects/{id}/jobs/artifacts/{ref_name}/raw/{artifact_path}"]) {
			const op = doc.paths[path].get;
			expect(param(op, "ref_name")).toMatchObject({ in: "path", required: true });
			expect(param(op, "job")).toMatchObject({ in: "query", required: true, schema: { type: "string", maxLength: 255 } });
		}
		expect(Object.keys(doc.paths).filter(p => p.includes("*"))).toEqual([]);
	});

	it("states the parameters' relations: exactly one label, none the path gives; at least one change", () => {
		expect(doc.paths["/projects/{id}/labels/{label_id}"].delete.parameters.map((p: any) => p.name)).toEqual(["id", "label_id"]);
		const byName = doc.paths["/projects/{id}/labels"].delete.parameters[1];
		expect(byName).toMatchObject({ in: "query", style: "form", explode: true, required: true });
		expect(byName.schema.oneOf).toEqual([{ required: ["label_id"] }, { required: ["name"] }]);
		const edit = doc.paths["/projects/{id}/labels/{label_id}"].put.requestBody.content["application/json"].schema;
		expect(Object.keys(edit.properties)).not.toContain("name");
		expect(edit.anyOf.map((b: any) => b.required[0])).toEqual(["new_name", "color", "description", "priority"]);
		const deprecated = doc.paths["/projects/{id}/labels"].put.requestBody.content["application/json"].schema;
		expect(deprecated.allOf[0].oneOf).toEqual([{ required: ["label_id"] }, { required: ["name"] }]);
	});

	it("answers a subscription 201 with the label, or 304 when nothing changes", () => {
		for (const verb of ["subscribe", "unsubscribe"]) {
			const op = doc.paths[`/projects/{id}/labels/{label_id}/${verb}`].post;
			expect(op.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ProjectLabelV4" });
			expect(op.responses["304"]).toEqual({ $ref: "#/components/responses/NotModified" });
		}
	});

	it("gives page and per_page the bounds their rule checks, and says what a list makes of them", () => {
		const op = doc.paths["/projects/{id}/labels"].get;
		for (const name of ["page", "per_page"])
			expect(param(op, name).schema).toMatchObject({ type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
		expect(param(op, "per_page").schema.description).toContain("100 at most");
	});

	it("lists under a literal path the wildcard route that answers it too", () => {
		const keep = doc.paths["/projects/{id}/jobs/{job_id}/artifacts/keep"];
		expect(Object.keys(keep).sort()).toEqual(["get", "post"]);
		expect(keep.get.parameters.map((p: any) => p.name)).toEqual(["id", "job_id"]);
		expect(keep.get.description).toMatch(/^`GET \/projects\/:id\/jobs\/:job_id\/artifacts\/\*artifact_path`/);
	});

	it("links a create to the operations on what it made, the id from its answer", () => {
		const links = doc.paths["/projects/{id}/labels"].post.responses["201"].links;
		expect(links.get_projects_id_labels_label_id).toEqual({
			operationId: "get_projects_id_labels_label_id",
			parameters: { id: "$request.path.id", label_id: "$response.body#/id" },
			description: "GET /projects/{id}/labels/{label_id} on what this made.",
		});
		expect(Object.keys(links).sort()).toEqual([
			"delete_projects_id_labels_label_id",
			"get_projects_id_labels_label_id",
			"post_projects_id_labels_label_id_subscribe",
			"post_projects_id_labels_label_id_unsubscribe",
			"put_projects_id_labels_label_id",
		]);
		// A new project: everything under it that needs nothing else.
		const project = doc.paths["/projects"].post.responses["201"].links;
		expect(project.get_projects_id.parameters).toEqual({ id: "$response.body#/id" });
		expect(project.post_projects_id_labels).toBeDefined();
		expect(project.get_projects_id_labels_label_id).toBeUndefined();
		// Its lists, but no read of a record of its own below it, which a new project may not have yet.
		expect(project.get_projects_id_labels).toBeDefined();
		const ids = Object.keys(project);
		expect(ids.filter(id => id.startsWith("put_projects_id_integrations_"))).toContain("put_projects_id_integrations_slack");
		expect(ids.filter(id => /^get_projects_id_(integrations|pipelines)_/.test(id))).toEqual([]);
	});

	it("describes each integration's PUT under its GitLab name with its own fields, beside its GET and DELETE", () => {
		const slack = doc.paths["/projects/{id}/integrations/slack"];
		expect(Object.keys(slack).sort()).toEqual(["delete", "get", "put"]);
		const body = slack.put.requestBody.content["application/json"].schema;
		expect(body.required).toEqual(["webhook"]);
		expect(Object.keys(body.properties)).toEqual(
			expect.arrayContaining(["webhook", "notify_only_broken_pipelines", "branches_to_be_notified", "push_events"]),
		);
		expect(slack.put.responses["400"]).toEqual({ $ref: "#/components/responses/RuleRefusal" });
		// Any other name of it (`team-chat`, `team_chat`): the fields are those above.
		expect(doc.paths["/projects/{id}/integrations/{slug}"].put.requestBody).toBeUndefined();
		expect(param(doc.paths["/projects/{id}/integrations/{slug}"].get, "slug").schema.pattern).toContain("team[-_]chat");
	});

	it("describes JSON bodies, an optional field null as not sent", () => {
		const content = doc.paths["/projects/{id}/labels"].post.requestBody.content;
		expect(Object.keys(content)).toEqual(["application/json"]);
		expect(content["application/json"].schema.properties.priority.anyOf).toContainEqual({ type: "null" });
		expect(content["application/json"].schema.properties.description.type).toEqual(["string", "null"]);
	});

	it("takes a JSON value that is no object as an empty body where the route needs no field, and only there", () => {
		const bodies = Object.values(doc.paths).flatMap((item: any) =>
			Object.values(item).map((op: any) => op.requestBody?.content?.["application/json"] && op.requestBody),
		);
		const optional = bodies.filter((b: any) => b && !b.required);
		expect(optional.length).toBeGreaterThan(0);
		for (const body of optional) expect(body.content["application/json"].schema.anyOf[1].type).toEqual(["array", "string", "number", "boolean", "null"]);
		// A label needs its name: an array is refused as an empty body is.
		expect(doc.paths["/projects/{id}/labels"].post.requestBody.required).toBe(true);
		expect(doc.paths["/projects/{id}/labels"].post.requestBody.content["application/json"].schema.type).toBe("object");
	});
});

describe("what a route's own code reads, and refusals no schema can foresee", () => {
	const schemas = loadActionSchemas();
	const doc = buildOpenApi(routeTables, { basePath: "/api/v3", action: name => schemas[name], rateLimitPerMinute: 0 }) as any;

	it("describes a body read by hand as its reader declares it", () => {
		const create = doc.paths["/internal/builds"].post;
		expect(create.requestBody.content["application/json"].schema).toEqual(NEW_BUILD_SCHEMA);
		expect(create.requestBody.content["text/plain"]).toBeUndefined();
		// An empty text/plain body is no trace at all.
		expect(doc.paths["/internal/builds/{build_id}/trace"].patch.requestBody.content["text/plain"]).toEqual({ schema: { type: "string", minLength: 1 } });
		expect(doc.paths["/internal/builds/{build_id}/artifacts"].put.parameters.map((p: any) => [p.name, p.required])).toEqual([
			["build_id", true],
			["filename", true],
		]);
	});

	it("says where a 400 may refuse what the schema cannot tell from good input", () => {
		const refusing = Object.entries(doc.paths).flatMap(([path, ops]) =>
			Object.entries(ops as Record<string, any>)
				.filter(([, op]) => op.responses["400"]?.$ref === "#/components/responses/RuleRefusal")
				.map(([method]) => `${method.toUpperCase()} ${path}`),
		);
		expect(refusing.filter(op => !op.includes("/services/")).sort()).toEqual([
			"POST /internal/builds",
			"POST /internal/push",
			"POST /projects",
			"POST /projects/{id}/deploy_keys",
			"POST /projects/{id}/keys",
			"POST /projects/{id}/snippets",
			"PUT /internal/builds/{build_id}",
			"PUT /projects/{id}/labels",
			"PUT /projects/{id}/snippets/{snippet_id}",
		]);
	});

	it("takes no body where the action reads nothing but its path", () => {
		expect(doc.paths["/projects/{id}/builds/{build_id}/cancel"].post.requestBody).toBeUndefined();
	});
});
