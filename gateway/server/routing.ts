/**
 * How the gateway's own answers find a request's route: the edge decision's fast path
 * (gateway/edge/cached-get-fast-path.ts), the `OPTIONS` answer and the `Expect: 100-continue` check
 * (gateway/server/http-server.ts) resolve it with `Routing.of`, which is moleculer-web's
 * own resolution (the one its `rest` action makes), on the path as moleculer-web matches it. The
 * methods a path takes (`Routing.allow`) are what `OPTIONS` lists and what a `405 Method Not
 * Allowed` names for any other method on that path (services/api.service.ts), as Grape does. A path
 * segment that does not decode (`%ZZ`, `%C3%28`) throws moleculer-web's BadRequestError wherever it is
 * resolved: the guarded entry answers it 400 (docs/architecture.md#the-guarded-entry).
 */
import type { IncomingMessage, ServerResponse } from "http";
import { methodNotAllowed } from "../../lib/api/errors";

/**
 * A moleculer-web alias function: it runs after the route's authentication and authorization, with
 * the gateway service as `this` (a file download or an artifacts upload). `action`, when set, names
 * the action whose parameters describe it (for the API description and the route tests). What it
 * returns moleculer-web ignores (it waits for `next` or the answer); a download returns when it is done.
 */
export type AliasFunction = ((this: never, req: never, res: ServerResponse, next: (err?: unknown) => void) => void | Promise<void>) & { action?: string };

/** A moleculer-web alias, as far as the gateway's own answers read it. */
export interface AliasLike {
	path: string;
	/** The path under the API's root (`/api/v3/projects/:id/labels`). */
	fullPath?: string;
	type?: string;
	action?: unknown;
	/** An alias function (a download, an upload). */
	handler?: unknown;
	route?: { opts?: { name?: string } };
}

export interface FoundRoute {
	alias: AliasLike;
	params: Record<string, unknown>;
}

/** moleculer-web's `resolveAlias`: the first alias that matches the path and the method. */
export type ResolveAlias = (path: string, method: string) => FoundRoute | false;

/** The methods routes are declared with (HEAD goes as GET, OPTIONS is answered by the server). */
const ROUTED_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/** Marks a route handler that sends `100 Continue` itself once the request is authorized (gateway/server/http-server.ts#sendContinue). */
export const SENDS_CONTINUE = Symbol("sends continue");

/** moleculer-web's answer to a request none of its aliases took (its NotFoundError, no alias matched). */
export function isNotRouted(req: IncomingMessage & { $alias?: unknown }, err: unknown): boolean {
	const e = err as { name?: string; type?: string } | null;
	return req.$alias === undefined && e?.name === "NotFoundError" && e.type === "NOT_FOUND";
}

/** A request's path as moleculer-web matches it: no query, no trailing slash (the whole of it, once moleculer-web has cut `req.url` to its route's part). */
export function routedPath(req: IncomingMessage & { originalUrl?: string }): string {
	const url = req.originalUrl ?? req.url ?? "";
	const query = url.indexOf("?");
	const path = query === -1 ? url : url.slice(0, query);
	return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** `Allow` as Grape writes it: OPTIONS, then the path's methods, HEAD beside GET. */
function allowHeader(methods: string[]): string {
	const allowed = ["OPTIONS"];
	for (const method of methods) {
		if (!allowed.includes(method)) allowed.push(method);
		if (method === "GET" && !allowed.includes("HEAD")) allowed.push("HEAD");
	}
	return allowed.join(", ");
}

export class Routing {
	constructor(private readonly resolveAlias: ResolveAlias) {}

	/** The route of `req`'s path for `method` (its own by default); false: none. */
	of(req: IncomingMessage, method = req.method ?? "GET"): FoundRoute | false {
		return this.resolveAlias(routedPath(req), method);
	}

	/** The route template of `req` (`/api/v3/projects/:id/labels`), for its span; none for an unknown path or one that does not decode. */
	template(req: IncomingMessage): string | undefined {
		try {
			// OPTIONS is answered for the path, whichever of its routes.
			const methods = req.method === "OPTIONS" ? ROUTED_METHODS : [req.method ?? "GET"];
			for (const method of methods) {
				const found = this.of(req, method);
				if (found) return found.alias.fullPath;
			}
			return undefined;
		} catch {
			return undefined;
		}
	}

	/** The methods `req`'s path has routes for (none: an unknown path). */
	methods(req: IncomingMessage): string[] {
		return ROUTED_METHODS.filter(method => this.of(req, method) !== false);
	}

	/** `req`'s path's `Allow` header (`OPTIONS, GET, HEAD, PUT`), or undefined for a path no route has. */
	allow(req: IncomingMessage): string | undefined {
		const methods = this.methods(req);
		return methods.length ? allowHeader(methods) : undefined;
	}

	/**
	 * What a request no route took is answered: a 405 naming the path's methods when it has routes
	 * for others (Grape's answer, a HEAD where there is no GET included), else `notFound` as it was.
	 */
	notRouted(req: IncomingMessage, notFound: unknown): unknown {
		let allow: string | undefined;
		try {
			allow = this.allow(req);
		} catch {
			return notFound;
		}
		return allow === undefined ? notFound : methodNotAllowed(allow);
	}

	/** Whether `req`'s route sends `100 Continue` itself, once the request is authorized (an artifacts upload). */
	sendsContinue(req: IncomingMessage): boolean {
		const found = this.of(req);
		const handler = found ? found.alias.handler : undefined;
		return typeof handler === "function" && (handler as { [SENDS_CONTINUE]?: boolean })[SENDS_CONTINUE] === true;
	}
}
