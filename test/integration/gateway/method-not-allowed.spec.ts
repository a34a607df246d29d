/**
 * A method a known path does not take (gateway/server/routing.ts): 405 with `Allow`, as Grape answers it,
 * on v3 and v4, the same methods OPTIONS lists and the document has for the path; an unknown path
 * stays a 404.
 */
import http from "http";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";

let stack: LocalStack;
let root: string;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService]);
	root = stack.url.replace(/\/api\/v3$/, "");
});

afterAll(() => stack?.stop());

/** Any method, TRACE included (fetch refuses it): status, headers and body. */
function call(method: string, path: string): Promise<{ status: number; allow: string | undefined; body: string }> {
	return new Promise((resolve, reject) => {
		const req = http.request(`${root}${path}`, { method, headers: { "PRIVATE-TOKEN": stack.rootToken } }, res => {
			let body = "";
			res.on("data", (chunk: Buffer) => (body += chunk.toString()));
			res.on("end", () => resolve({ status: res.statusCode!, allow: res.headers.allow, body }));
		});
		req.on("error", reject);
		req.end();
	});
}

it.each([
	["PUT", "/api/v3/user", "OPTIONS, GET, HEAD"],
	["DELETE", "/api/v4/user", "OPTIONS, GET, HEAD"],
	["PATCH", "/api/v4/projects/1/labels", "OPTIONS, GET, HEAD, POST, PUT, DELETE"],
	["TRACE", "/api/v3/projects/1/labels/bug", "OPTIONS, DELETE"],
	["HEAD", "/api/v4/projects/1/labels/1/subscribe", "OPTIONS, POST"],
	["GET", "/api/v3/internal/builds", "OPTIONS, POST"],
])("%s %s: 405 naming %s, as OPTIONS does", async (method, path, allow) => {
	const res = await call(method, path);
	expect([res.status, res.allow]).toEqual([405, allow]);
	if (method !== "HEAD") expect(JSON.parse(res.body)).toEqual({ error: "405 Not Allowed" });
	const options = await call("OPTIONS", path);
	expect([options.status, options.allow]).toEqual([204, allow]);
});

it("says the document's methods of a path, and keeps 404 for a path no route has", async () => {
	const doc = (await (await fetch(`${stack.url}/openapi.json`)).json()) as { paths: Record<string, object> };
	const documented = Object.keys(doc.paths["/api/v4/projects/{id}/labels"]).map(m => m.toUpperCase());
	const allowed = (await call("OPTIONS", "/api/v4/projects/1/labels")).allow!.split(", ");
	expect(allowed.filter(m => m !== "OPTIONS" && m !== "HEAD").sort()).toEqual(documented.sort());
	const missing = await call("PUT", "/api/v4/nowhere");
	expect([missing.status, JSON.parse(missing.body)]).toEqual([404, { error: "404 Not Found" }]);
});
