/**
 * The edge decision (docs/architecture.md#the-edge-pipeline): what the gateway settles about an API
 * request before any service sees it, in this order: the caller (its private token, and whom an
 * admin's sudo names), the request counted against what was verified (gateway/edge/rate-limit.ts), the
 * project and the caller's level on /projects/:id/… routes (gateway/edge/project-route.ts), the action's
 * parameters (gateway/edge/edge-validation.ts), the level the action asks, and the cache entry that
 * answers a GET.
 *
 * It is written once, as a generator of what each step needs from outside (a `Need`), and run by two
 * drivers: `decide` awaits every need (the gateway's hook, gateway/caller.mixin.ts), `decideNow`
 * answers each one at once from what this process holds, or leaves the request to the usual way
 * (the fast path of a cached GET, gateway/edge/cached-get-fast-path.ts). The fast path cannot decide
 * differently: it takes the same steps, and only answers sooner.
 */
import type { ServerResponse } from "http";
import { hasLevel, type Caller, type ProjectAccess } from "../../lib/accounts/access";
import { PROJECT_ACCESS, RESOLVE_TOKEN } from "../../lib/accounts/auth-cache";
import { forbidden, notFound, unauthorized } from "../../lib/api/errors";
import { extractToken, SUDO_CALLER, sudoCaller, sudoIdentifier, type RecentTokens, type TokenSource } from "./auth";
import type { CachedAction, CacheReads } from "../../lib/cache/cache-reads";
import type { ActionLike, EdgeValidator } from "./edge-validation";
import {
	ACCESS_LOOKUP,
	accessLookupParams,
	hidesProjectsFromAnonymous,
	isProjectRoute,
	mayNameProject,
	MAX_TOKEN_LENGTH,
	type AccessLookup,
} from "./project-route";
import { addressKey, userKey, type RequestLimits } from "./rate-limit";

/** An action as the registry describes it, with the rules it declares (types/moleculer.d.ts). */
export type EdgeAction = CachedAction & ActionLike & { auth?: string; access?: number };

/** What the decision settles for the services, in `ctx.meta` (lib/api/context.ts). */
interface EdgeMeta {
	clientAddress?: string;
	user?: Caller | null;
	access?: ProjectAccess;
	projectKey?: string;
}

export interface EdgeRequest {
	/** Where the token and a sudo come from: the headers, and the query and body once they are parsed. */
	http: TokenSource;
	/** The route (moleculer-web's alias): its path tells a /projects/:id/… route. */
	alias: { path: string };
	/** The action behind the route; none behind an alias function (a download), whose grant checks its own parameters. */
	action?: EdgeAction;
	/** Behind an alias function: the `auth` its grant action declares (a download of a public project's for anyone). */
	grantAuth?: string;
	/** The action's parameters, converted in place by its schema. */
	params: Record<string, unknown>;
	/** Filled by the decision: `user`, and `access` and `projectKey` on a project route. */
	meta: EdgeMeta;
	/** Whether a cached answer may answer it: a GET, not streamed. */
	readsCache: boolean;
}

/** What a step needs from outside; each driver answers it its own way. */
type Need =
	| { kind: "owner"; token: string }
	| { kind: "count"; key: string }
	| { kind: "sudo"; admin: Caller; ref: string }
	| { kind: "access"; lookup: AccessLookup; meta: EdgeMeta }
	| { kind: "params"; action: EdgeAction; params: object }
	| { kind: "answer"; action: EdgeAction; params: object; meta: EdgeMeta };

/** The decision, step by step: it yields what it needs and gets the driver's answer back (or its error thrown in). */
function* decision(request: EdgeRequest): Generator<Need, unknown, unknown> {
	const { action, meta } = request;
	const mode = action ? action.auth : request.grantAuth;
	const token = mode === "none" ? null : extractToken(request.http);
	if (!token || token.length > MAX_TOKEN_LENGTH) {
		// No caller: the request counts against the client's address. No private token is that long.
		yield { kind: "count", key: addressKey(meta.clientAddress ?? "unknown") };
		if (token || (mode !== "optional" && mode !== "none")) throw unauthorized();
		meta.user = null;
	} else {
		let caller: Caller;
		try {
			caller = (yield { kind: "owner", token }) as Caller;
		} catch (err) {
			// A made-up token buys no budget of its own.
			if ((err as { code?: number }).code === 401) yield { kind: "count", key: addressKey(meta.clientAddress ?? "unknown") };
			throw err;
		}
		yield { kind: "count", key: userKey(caller.id) };
		// Sudo: counted as the admin, acting as the user named.
		const sudo = sudoIdentifier(request.http);
		meta.user = sudo === null ? caller : ((yield { kind: "sudo", admin: caller, ref: sudo }) as Caller);
	}
	if (isProjectRoute(request.alias)) {
		const ref = request.params.id;
		const user = meta.user ?? null;
		// Anonymous callers reach public projects only. v3 asks them to sign in for anything else
		// (docs/api.md#authentication), whether or not the project exists; v4 answers them as anyone
		// who may not read it (docs/api.md#v4-anonymous).
		const signIn = !user && !hidesProjectsFromAnonymous(request.alias);
		// Names no project: answered without a look-up, a ref too long for any as an unknown project is.
		if (!mayNameProject(ref)) throw typeof ref === "string" && ref.trim() && signIn ? unauthorized() : notFound("Project");
		let access: ProjectAccess;
		try {
			access = (yield { kind: "access", lookup: accessLookupParams(ref, user), meta }) as ProjectAccess;
		} catch (err) {
			if (signIn && (err as { code?: number }).code === 404) throw unauthorized();
			throw err;
		}
		meta.access = access;
		meta.projectKey = String(access.project.id);
	}
	if (!action) return undefined;
	yield { kind: "params", action, params: request.params };
	// The level the action declares, checked before any call or cache read.
	if (action.access !== undefined && !(meta.access && hasLevel(meta.access, action.access))) throw forbidden();
	return request.readsCache ? yield { kind: "answer", action, params: request.params, meta } : undefined;
}

/** The gateway's pieces the decision reads: the same objects for both drivers (gateway/caller.mixin.ts makes them). */
export interface EdgePieces {
	recentTokens: RecentTokens;
	cacheReads: CacheReads;
	edgeValidator: EdgeValidator;
	limits: RequestLimits;
}

/** What the usual way answers needs with. */
export interface UsualWay {
	/** The answer to come, which the request count gives its headers. */
	res: ServerResponse;
	/** A call of another service's action, as the gateway calls (its options, the request's context). */
	call<T>(action: string, params: object): Promise<T>;
	/** Whether a hit may come back as the JSON bytes the cache holds (lib/cache/cache-reads.ts#answer). */
	encodedHits: boolean;
}

const noop = () => undefined;

/**
 * The decision, every need awaited; resolves to the cached answer of a GET (undefined: none), or
 * rejects with the refusal. The request's count runs beside what comes next (the project access is
 * read meanwhile), and nothing is called, answered or refused before it says the request may go on.
 */
export async function decide(pieces: EdgePieces, request: EdgeRequest, way: UsualWay): Promise<unknown> {
	const steps = decision(request);
	let counted: Promise<void> | undefined;
	try {
		let step = steps.next();
		while (!step.done) {
			const need = step.value;
			if (need.kind === "count") {
				counted = pieces.limits.count(way.res, need.key);
				counted.catch(noop); // awaited below; never left unhandled
				step = steps.next();
				continue;
			}
			let answer: unknown;
			try {
				answer = await answerAfterCount(pieces, need, way, counted);
			} catch (err) {
				step = steps.throw(err);
				continue;
			}
			step = steps.next(answer);
		}
		await counted;
		return step.value;
	} catch (err) {
		await counted;
		throw err;
	}
}

async function answerAfterCount(pieces: EdgePieces, need: Exclude<Need, { kind: "count" }>, way: UsualWay, counted: Promise<void> | undefined) {
	const { cacheReads } = pieces;
	if (need.kind === "owner") return ownerOf(pieces, need.token, way);
	if (need.kind === "access") {
		const [, hit] = await Promise.all([counted, cacheReads.read(ACCESS_LOOKUP, need.lookup, need.meta)]);
		return hit !== undefined ? hit : way.call<ProjectAccess>(PROJECT_ACCESS.action, need.lookup);
	}
	await counted;
	if (need.kind === "sudo") return sudoCaller(need.admin, need.ref, ref => way.call<Caller>(SUDO_CALLER, { ref }));
	if (need.kind === "params") return pieces.edgeValidator.validate(need.action, need.params);
	// A page from Redis keeps its rows' JSON bytes (lib/cache/cache-reads.ts `encodedPage`).
	if (way.encodedHits) return cacheReads.answer(need.action, need.params, need.meta, { encodedRows: true });
	return cacheReads.read(need.action, need.params, need.meta);
}

/** The token's owner: kept from a recent request (gateway/edge/auth.ts), else from the cache when accounts has it there, else from accounts. */
async function ownerOf(pieces: EdgePieces, token: string, way: UsualWay): Promise<Caller> {
	const { recentTokens, cacheReads } = pieces;
	const found = recentTokens.lookup(token);
	const kept = recentTokens.ownerOf(found);
	if (kept) return kept;
	const hit = await cacheReads.readKey(found.key);
	const owner = hit === undefined ? await way.call<Caller>(RESOLVE_TOKEN.action, { tokenHash: found.hash }) : (hit as Caller);
	recentTokens.keepOwner(found, owner);
	return owner;
}

/** A decision made at once: the cached answer, and the key its request is counted under once it is answered. */
export interface DecidedNow {
	cached: unknown;
	countKey: string;
}

/**
 * The decision made at once, from what this process holds: the token's owner kept, the project
 * access and the answer in the in-process cache, the parameters checked without waiting. Undefined
 * when a need cannot be answered at once or a step refuses: the usual way then decides, and gives
 * its own answer. Nothing is counted here; the caller counts once it answers.
 */
export function decideNow(pieces: EdgePieces, request: EdgeRequest): DecidedNow | undefined {
	const { recentTokens, cacheReads } = pieces;
	const steps = decision(request);
	let countKey: string | undefined;
	try {
		let step = steps.next();
		while (!step.done) {
			const need = step.value;
			let answer: unknown;
			if (need.kind === "owner") answer = recentTokens.ownerOf(recentTokens.lookup(need.token));
			else if (need.kind === "count") answer = countKey = need.key;
			else if (need.kind === "access") answer = cacheReads.peek(cacheReads.keyOf(ACCESS_LOOKUP, need.lookup, need.meta));
			else if (need.kind === "params") answer = pieces.edgeValidator.passesNow(need.action, need.params) || undefined;
			else if (need.kind === "answer") answer = cacheReads.peek(cacheReads.keyOf(need.action, need.params, need.meta));
			if (answer === undefined) return undefined; // a sudo, or what this process does not hold
			step = steps.next(answer);
		}
		return step.value === undefined || countKey === undefined ? undefined : { cached: step.value, countKey };
	} catch {
		return undefined;
	}
}
