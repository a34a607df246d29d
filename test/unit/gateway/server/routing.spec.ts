/** How the gateway's own answers find a request's route (gateway/server/routing.ts): moleculer-web's resolution, on the path it matches. */
import type { IncomingMessage } from "http";
import { isNotRouted, routedPath, Routing, SENDS_CONTINUE, type FoundRoute } from "../../../../gateway/server/routing";

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

it("says a path's methods as Grape's Allow, and answers a method it does not take 405 with them", () => {
	const routing = new Routing((path, method): FoundRoute | false =>
		path === "/x" && ["GET", "POST"].includes(method) ? { alias: { path: "x" }, params: {} } : false,
	);
	expect(routing.allow(req("OPTIONS", "/x"))).toBe("OPTIONS, GET, HEAD, POST");
	expect(routing.allow(req("OPTIONS", "/y"))).toBeUndefined();
	const notFound = Object.assign(new Error("Not found"), { name: "NotFoundError", type: "NOT_FOUND" });
	// moleculer-web cut req.url to its route's part: the whole path is in originalUrl.
	const put = Object.assign(req("PUT", "/x"), { originalUrl: "/x", url: "/" });
	expect(isNotRouted(put, notFound)).toBe(true);
	expect(routing.notRouted(put, notFound)).toMatchObject({
		code: 405,
		data: { body: { error: "405 Not Allowed" }, headers: { Allow: "OPTIONS, GET, HEAD, POST" } },
	});
	expect(routing.notRouted(req("PUT", "/y"), notFound)).toBe(notFound);
	// An action's own 404, or a request an alias took, is no routing answer.
	expect(isNotRouted(Object.assign(req("GET", "/x"), { $alias: {} }), notFound)).toBe(false);
	expect(isNotRouted(put, Object.assign(new Error("404 Label Not Found"), { name: "MoleculerClientError", type: "GITLAB_API_ERROR" }))).toBe(false);
});
