/** How the gateway's own answers find a request's route (gateway/routing.ts): moleculer-web's resolution, on the path it matches. */
import type { IncomingMessage } from "http";
import { routedPath, Routing, SENDS_CONTINUE, type FoundRoute } from "../../../gateway/routing";

const req = (method: string, url: string) => ({ method, url, headers: {} }) as IncomingMessage;

it("matches the path without its query or a trailing slash", () => {
	expect(routedPath(req("GET", "/api/v3/projects/1/labels/?private_token=x"))).toBe("/api/v3/projects/1/labels");
	expect(routedPath(req("GET", "/"))).toBe("/");
	expect(routedPath(req("GET", "/a?b/"))).toBe("/a");
});

it("resolves by the request's method unless told another, and lists a path's methods", () => {
	const asked: string[] = [];
	const upload = Object.assign(() => undefined, { [SENDS_CONTINUE]: true });
	const routing = new Routing((path, method): FoundRoute | false => {
		asked.push(`${method} ${path}`);
		if (path !== "/x") return false;
		if (method === "GET") return { alias: { path: "x" }, params: {} };
		return method === "PUT" ? { alias: { path: "x", handler: upload }, params: {} } : false;
	});
	expect(routing.of(req("PUT", "/x/"))).toMatchObject({ alias: { handler: upload } });
	expect(routing.of(req("PUT", "/x"), "GET")).toEqual({ alias: { path: "x" }, params: {} });
	expect(asked).toEqual(["PUT /x", "GET /x"]);
	expect(routing.methods(req("OPTIONS", "/x"))).toEqual(["GET", "PUT"]);
	expect(routing.methods(req("OPTIONS", "/y"))).toEqual([]);
	expect([routing.sendsContinue(req("PUT", "/x")), routing.sendsContinue(req("GET", "/x")), routing.sendsContinue(req("PUT", "/y"))]).toEqual([
		true,
		false,
		false,
	]);
});

it("lets a segment that does not decode throw, for the guarded entry to answer", () => {
	const routing = new Routing(path => ({ alias: { path: "p/:id" }, params: { id: decodeURIComponent(path.slice(3)) } }));
	expect(() => routing.of(req("GET", "/p/%ZZ"))).toThrow(URIError);
});
