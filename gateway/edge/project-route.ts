/**
 * What the gateway resolves on /projects/:id/… routes before anything else: the project and the
 * caller's level in it (docs/architecture.md#authentication), read from the shared cache that
 * accounts fills, under the key accounts' own look-up has.
 */
import type { Caller } from "../../lib/accounts/access";
import { MAX_PROJECT_REF, PROJECT_ACCESS, projectRefKey } from "../../lib/accounts/auth-cache";

/** `/projects/:id/…` of any version (`/v3/projects/:id`, `/v4/projects/:id`: gateway/routes). */
const PROJECT_ROUTE = /^\/?(?:v\d+\/)?projects\/:id(\/|$)/;
/** Whether a route (moleculer-web's alias object) is under /projects/:id, decided once per route. */
const projectRoutes = new WeakMap<object, boolean>();

export function isProjectRoute(alias: { path: string }): boolean {
	let yes = projectRoutes.get(alias);
	if (yes === undefined) projectRoutes.set(alias, (yes = PROJECT_ROUTE.test(alias.path)));
	return yes;
}

/** A route of API v4 (`/v4/projects/:id/labels`: gateway/routes mounts each version under its root). */
const V4_ROUTE = /^\/?v4\//;
const v4Routes = new WeakMap<object, boolean>();

/**
 * Whether an anonymous caller who may not read the project is told so as anyone else is, `404
 * Project Not Found` (GitLab v4), rather than asked to sign in, 401 (GitLab 8.16's v3): whether the
 * route is v4's (docs/api.md#v4-anonymous).
 */
export function hidesProjectsFromAnonymous(alias: { path: string }): boolean {
	let yes = v4Routes.get(alias);
	if (yes === undefined) v4Routes.set(alias, (yes = V4_ROUTE.test(alias.path)));
	return yes;
}

/** The access look-up as the cache reads name it: made once, read on every project route. */
export const ACCESS_LOOKUP = { name: PROJECT_ACCESS.action, cache: PROJECT_ACCESS.cache };

/** The parameters of accounts' access look-up. */
export type AccessLookup = ReturnType<typeof accessLookupParams>;

/** The parameters of accounts' access look-up for the project `ref` names, as `user` (null: anonymous). */
export function accessLookupParams(ref: string, user: Caller | null) {
	return { project: projectRefKey(ref), userId: user ? user.id : 0, admin: !!user?.is_admin };
}

/** Whether `ref` (the route's `:id`) can name a project at all; anything else is answered as an unknown project, without a look-up. */
export function mayNameProject(ref: unknown): ref is string {
	return typeof ref === "string" && ref.trim() !== "" && ref.length <= MAX_PROJECT_REF;
}

/** GitLab's private tokens are 20 characters; later kinds stay far below this. */
export const MAX_TOKEN_LENGTH = 255;
