/**
 * The projects and users lists as GitLab 8.16 filters and orders them (lib/api/projects.rb
 * `filter_projects`, lib/api/users.rb), as store queries, pure: the parameters are declared here
 * (checked at the gateway), the filtering, ordering and paging happen in the store.
 */
import { PAGE_PARAMS } from "../api/pagination";
import { Visibility } from "./access";

type Query = Record<string, unknown>;

/** Longest `search` taken: far beyond any name, and a bounded pattern. */
const MAX_SEARCH_LENGTH = 255;

const PROJECT_ORDER_FIELDS = ["id", "name", "path", "created_at", "updated_at", "last_activity_at"] as const;
export const PROJECT_VISIBILITIES = ["public", "internal", "private"] as const;

/** GitLab 8.16's `collection_params` of the projects lists. */
export const PROJECT_LIST_PARAMS = {
	order_by: { type: "enum", values: PROJECT_ORDER_FIELDS, optional: true },
	sort: { type: "enum", values: ["asc", "desc"], optional: true },
	archived: { type: "boolean", optional: true, convert: true },
	visibility: { type: "enum", values: PROJECT_VISIBILITIES, optional: true },
	search: { type: "string", optional: true, max: MAX_SEARCH_LENGTH },
	simple: { type: "boolean", optional: true, convert: true },
	...PAGE_PARAMS,
} as const;

export interface ProjectListParams {
	order_by?: (typeof PROJECT_ORDER_FIELDS)[number];
	sort?: "asc" | "desc";
	archived?: boolean;
	visibility?: (typeof PROJECT_VISIBILITIES)[number];
	search?: string;
	simple?: boolean;
	page?: number;
	per_page?: number;
}

/** The parameters of `GET /users`. */
export const USER_LIST_PARAMS = {
	username: { type: "string", optional: true, max: MAX_SEARCH_LENGTH },
	search: { type: "string", optional: true, max: MAX_SEARCH_LENGTH },
	active: { type: "boolean", optional: true, convert: true },
	blocked: { type: "boolean", optional: true, convert: true },
	external: { type: "boolean", optional: true, convert: true },
	...PAGE_PARAMS,
} as const;

export interface UserListParams {
	username?: string;
	search?: string;
	active?: boolean;
	blocked?: boolean;
	external?: boolean;
	page?: number;
	per_page?: number;
}

const VISIBILITY_LEVEL: Record<(typeof PROJECT_VISIBILITIES)[number], number> = {
	public: Visibility.PUBLIC,
	internal: Visibility.INTERNAL,
	private: Visibility.PRIVATE,
};

const present = (s: string | undefined): s is string => typeof s === "string" && s.trim() !== "";

/** `text` matched anywhere, case-insensitively (SQL's ILIKE '%text%'), with nothing in it read as a pattern. */
export function containsPattern(text: string): { $regex: RegExp } {
	return { $regex: new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i") };
}

/** All the conditions at once (an empty list: everything). */
export function allOf(conditions: Query[]): Query {
	if (!conditions.length) return {};
	return conditions.length === 1 ? conditions[0] : { $and: conditions };
}

/**
 * The projects a signed-in user sees in `GET /projects`: those it is a member of, and the public
 * and internal ones (GitLab 8.16's ProjectsFinder, which its `/projects/visible` lists).
 */
export function visibleProjectsCondition(memberProjectIds: number[]): Query {
	return { $or: [{ id: { $in: memberProjectIds } }, { visibility_level: { $in: [Visibility.INTERNAL, Visibility.PUBLIC] } }] };
}

/**
 * GitLab's `filter_projects`: `search` in the name, path, description or namespace; `visibility`;
 * `archived` (false unless asked: no project is archived here, so `archived=true` lists none).
 */
export function projectFilters(p: ProjectListParams): Query[] {
	const filters: Query[] = [{ archived: p.archived ? true : { $ne: true } }];
	if (p.visibility) filters.push({ visibility_level: VISIBILITY_LEVEL[p.visibility] });
	if (present(p.search)) {
		const pattern = containsPattern(p.search.trim());
		filters.push({ $or: [{ name: pattern }, { path: pattern }, { description: pattern }, { namespace: pattern }] });
	}
	return filters;
}

/**
 * `order_by` (default created_at) and `sort` (default desc), with the id as tie-break so that pages
 * never overlap. Nothing changes a project after it is created here, so `updated_at` and
 * `last_activity_at` order as `created_at` does.
 */
export function projectSort(p: ProjectListParams): string[] {
	const field = p.order_by === "updated_at" || p.order_by === "last_activity_at" || !p.order_by ? "created_at" : p.order_by;
	const dir = p.sort === "asc" ? "" : "-";
	return field === "id" ? [`${dir}id`] : [`${dir}${field}`, `${dir}id`];
}

/**
 * `GET /users` as a store query, or null when the caller may not list: anyone looks a user up by
 * `username` (exact, case-insensitive) or searches (`search` in the username or name; admins also
 * in the e-mail, which only they see); the whole list is for admins. `active`, `blocked` and
 * (admins) `external` narrow it, as in GitLab 8.16.
 */
export function usersQuery(p: UserListParams, isAdmin: boolean): Query | null {
	if (present(p.username)) return { username_key: p.username.trim().toLowerCase() };
	if (!isAdmin && !present(p.search)) return null;
	const conditions: Query[] = [];
	if (p.active) conditions.push({ state: "active" });
	if (p.blocked) conditions.push({ state: "blocked" });
	if (p.external && isAdmin) conditions.push({ external: true });
	if (present(p.search)) conditions.push(userSearch(p.search, isAdmin));
	return allOf(conditions);
}

/** Users whose username or name holds `text` anywhere, in any case (admins: e-mails too), as GitLab 8.16's `User.search`. */
export function userSearch(text: string, isAdmin: boolean): Query {
	const pattern = containsPattern(text.trim());
	const fields = isAdmin ? ["username", "name", "email"] : ["username", "name"];
	return { $or: fields.map(f => ({ [f]: pattern })) };
}

/** The parameters of `GET /projects/:id/members`: GitLab 8.16's `query` (a user search) and the page. */
export const MEMBER_LIST_PARAMS = {
	query: { type: "string", optional: true, max: MAX_SEARCH_LENGTH },
	...PAGE_PARAMS,
} as const;

/** Whether a member list is narrowed by a `query` (a blank one lists everyone, as GitLab's `if params[:query]` with an empty search). */
export const searchesMembers = (query: string | undefined): query is string => present(query);
