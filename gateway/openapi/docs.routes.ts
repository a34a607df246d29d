/**
 * The API describes itself, without a token: GET /openapi.json is the OpenAPI 3.1 document the
 * gateway generates from its route tables and the actions' parameter schemas (gateway/openapi/openapi.ts),
 * and GET /docs the API reference rendered from it by Swagger UI (swagger-ui-dist), served from
 * this process only: no CDN, and a Content-Security-Policy that lets the page load nothing else.
 * Both are served under each version's root (/api/v3, /api/v4), and the one document describes
 * both versions (docs/api.md#docs-endpoints).
 */
import fs from "fs";
import type { IncomingMessage, ServerResponse } from "http";
import type { ServiceBroker } from "moleculer";
import path from "path";
import { pipeline } from "stream";
import { config } from "../../config";
import { addVersion, buildOpenApi } from "./openapi";
import type { ActionDefinition } from "./types";
import { API_ROOT, mergeAliases, routeTables, V3_ROOT, V4_ROOT, v4RouteTables } from "../routes/index";
import type { RouteTable } from "../routes/types";

/** What the pages need of the gateway service moleculer-web hands each request. */
interface GatewayService {
	broker: ServiceBroker;
}
type Req = IncomingMessage & { $params: Record<string, unknown>; $service?: GatewayService };
type Res = ServerResponse;

const SWAGGER_UI_DIR = path.dirname(require.resolve("swagger-ui-dist/package.json"));

/** The renderer's files the page loads, by the name it asks for. */
const ASSETS: Record<string, { file?: string; type: string }> = {
	"swagger-ui.css": { file: "swagger-ui.css", type: "text/css; charset=utf-8" },
	"swagger-ui-bundle.js": { file: "swagger-ui-bundle.js", type: "text/javascript; charset=utf-8" },
	"init.js": { type: "text/javascript; charset=utf-8" },
};

const PAGE_HEADERS = {
	"Content-Security-Policy": [
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data:",
		"font-src 'self' data:",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	].join("; "),
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy": "no-referrer",
};

function send(res: Res, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) {
	res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body), ...headers });
	res.end(body);
}

/** The actions every node of the cluster offers now, by name, from the gateway's registry. */
function registryActions(broker: ServiceBroker): Map<string, ActionDefinition> {
	const actions = new Map<string, ActionDefinition>();
	for (const item of broker.registry.getActionList({ skipInternal: true, onlyAvailable: true }) as { name: string; action?: ActionDefinition }[])
		if (item.action && !actions.has(item.name)) actions.set(item.name, item.action);
	return actions;
}

/** The one document of both versions: v3's routes, and v4's beside them, for the actions `action` finds. */
export function apiDocument(action: (name: string) => ActionDefinition | undefined, rateLimitPerMinute: number): Record<string, unknown> {
	const options = { action, rateLimitPerMinute };
	const v3 = buildOpenApi([...routeTables, docsRoutes], { ...options, basePath: V3, title: "GitLab API v3 service, with API v4 beside it" });
	return addVersion(v3, buildOpenApi([...v4RouteTables, docsRoutesAt(V4)], { ...options, basePath: V4 }), "v4");
}

/** The document for this gateway, as it runs now. */
function currentOpenApi(service: GatewayService): Record<string, unknown> {
	const actions = registryActions(service.broker);
	return apiDocument(name => actions.get(name), config.rateLimitPerMinute);
}

/** Each gateway's document, encoded: built on the first request after its services changed (a build takes milliseconds). */
const encodedDocuments = new WeakMap<object, string>();

/** The services changed: the next request builds the document again. */
export function forgetOpenApi(service: object): void {
	encodedDocuments.delete(service);
}

function openApiDocument(req: Req, res: Res) {
	const service = req.$service!;
	let body = encodedDocuments.get(service);
	if (body === undefined) encodedDocuments.set(service, (body = JSON.stringify(currentOpenApi(service))));
	send(res, 200, "application/json", body, { "Cache-Control": "no-cache" });
}

/** Each version's root, where its page and document are served. */
const V3 = API_ROOT + V3_ROOT;
const V4 = API_ROOT + V4_ROOT;

const pageAt = (root: string) =>
	function page(req: Req, res: Res) {
		const assets = `${root}/docs/assets`;
		const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GitLab API v3 and v4 service: API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script src="${assets}/init.js"></script>
</body>
</html>
`;
		send(res, 200, "text/html; charset=utf-8", html, { ...PAGE_HEADERS, "Cache-Control": "no-cache" });
	};

/** Starts Swagger UI on the generated document; nothing is fetched from elsewhere (no validator badge). */
const initScript = (root: string) => `window.ui = SwaggerUIBundle({
	url: ${JSON.stringify(`${root}/openapi.json`)},
	dom_id: "#swagger-ui",
	deepLinking: true,
	docExpansion: "list",
	defaultModelsExpandDepth: -1,
	displayOperationId: false,
	validatorUrl: null,
	presets: [SwaggerUIBundle.presets.apis],
	layout: "BaseLayout",
});
`;

const assetAt = (root: string) =>
	function asset(req: Req, res: Res) {
		const name = typeof req.$params.file === "string" ? req.$params.file : "";
		const known = Object.prototype.hasOwnProperty.call(ASSETS, name) ? ASSETS[name] : undefined;
		if (!known) return send(res, 404, "application/json", JSON.stringify({ message: "404 Not Found" }));
		const headers = { "X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=3600" };
		if (!known.file) return send(res, 200, known.type, initScript(root), headers);
		const file = path.join(SWAGGER_UI_DIR, known.file);
		fs.stat(file, (err, stat) => {
			if (err) return send(res, 404, "application/json", JSON.stringify({ message: "404 Not Found" }));
			res.writeHead(200, { "Content-Type": known.type, "Content-Length": stat.size, ...headers });
			// A client that leaves early closes the file too; a read error ends the response.
			pipeline(fs.createReadStream(file), res, () => undefined);
		});
	};

/** Each alias function tells the document what it serves (gateway/openapi/openapi.ts merges `openapi`). */
const described = <T extends object>(fn: T, summary: string, type: string) =>
	Object.assign(fn, { openapi: { summary, responses: { "200": { description: summary, content: { [type]: {} } } } } });

/** The document and the page under one version's root ("/api/v4"). */
function docsRoutesAt(root: string): RouteTable {
	return {
		docs: {
			"GET /openapi.json": described(openApiDocument, "This document: OpenAPI 3.1, generated from the running gateway", "application/json"),
			"GET /docs": described(pageAt(root), "The API reference page, rendered from this document", "text/html"),
			"GET /docs/assets/:file": described(assetAt(root), "The reference page's scripts and styles", "*/*"),
		},
	};
}

/** v3's. */
export const docsRoutes: RouteTable = docsRoutesAt(V3);

/** The moleculer-web route that mounts them under each version's root: no token, no body. */
export const docsRoute = {
	name: "docs",
	path: "",
	authentication: false,
	authorization: false,
	bodyParsers: false,
	mappingPolicy: "restrict",
	aliases: { ...mergeAliases("docs", [docsRoutes], V3_ROOT), ...mergeAliases("docs", [docsRoutesAt(V4)], V4_ROOT) },
};
