/** Every operation of the API reference has a human summary (gateway/openapi/openapi-summaries.ts), not an action's name. */
import { buildOpenApi } from "../../../../gateway/openapi/openapi";
import type { ActionDefinition } from "../../../../gateway/openapi/types";
import { operationSummary } from "../../../../gateway/openapi/openapi-summaries";
import { routeTables, v4RouteTables } from "../../../../gateway/routes";
import { docsRoutes } from "../../../../gateway/openapi/docs.routes";
import { loadActionSchemas } from "../../../support/routes";

const schemas = loadActionSchemas();
const action = (name: string): ActionDefinition | undefined => schemas[name];
type Operation = { summary: string; "x-moleculer-action"?: string };
const operations = (doc: Record<string, unknown>) =>
	Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
		Object.entries(ops).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, ...op })),
	);

it.each([
	["v3", [...routeTables, docsRoutes], "/api/v3"],
	["v4", v4RouteTables, "/api/v4"],
] as const)("gives each %s operation a written summary", (_version, tables, basePath) => {
	const doc = buildOpenApi([...tables], { basePath, action, rateLimitPerMinute: 0 });
	const unwritten = operations(doc).filter(op => /^[a-z]+\.[A-Za-z0-9]+$|^[A-Z]+ \//.test(op.summary));
	expect(unwritten.map(op => `${op.at}: ${op.summary}`)).toEqual([]);
});

it("says what an operation does in a few words", () => {
	const doc = buildOpenApi(routeTables, { basePath: "/api/v3", action, rateLimitPerMinute: 0 });
	const summaries = Object.fromEntries(operations(doc).map(op => [op.at, op.summary]));
	expect(summaries["POST /projects/{id}/labels"]).toBe("Create a label");
	expect(summaries["GET /projects/{id}/builds/{build_id}/artifacts"]).toBe("Download a build's artifacts archive");
	expect(summaries["GET /user"]).toBe("Get the signed-in user");
});

it("shares a v3 action's summary with its v4 twin, and has none for what it does not know", () => {
	expect(operationSummary("POST", "/projects/:id/labels", "labels.createV4")).toBe("Create a label");
	expect(operationSummary("GET", "/nowhere", "nothing.here")).toBeUndefined();
	expect(operationSummary("GET", "/nowhere", null)).toBeUndefined();
});
