/**
 * GitLab 8.x pagination (Kaminari): `page` from 1, `per_page` 20 by default and 100 at most,
 * with the X-Total… headers and a Link header. Pure: services page their queries with
 * `pageWindow`, and the gateway writes `paginationHeaders`. API v4's keyset pages
 * (docs/api.md#v4-keyset) carry the next page's cursor instead, and only a Link to it.
 */
import type { PageWindow } from "../store/types";

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

/**
 * `page` and `per_page` as every list action declares them (Grape's Integer: `abc` or `1.5` is a
 * 400 `page is invalid`); values below 1 fall back to the defaults and `per_page` is capped at
 * MAX_PER_PAGE, as Kaminari does (parsePage).
 */
const pageNumber = { type: "number", integer: true, convert: true, optional: true, min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } as const;
export const PAGE_PARAMS = { page: pageNumber, per_page: pageNumber } as const;

export interface PageRequest {
	page: number;
	perPage: number;
}

/** A list action's answer when it is paginated; the gateway turns it into headers and a body. */
export interface Paginated<T> {
	$paginated: true;
	rows: T[];
	total: number;
	page: number;
	perPage: number;
	/** A keyset page: the cursor of the next page, null on the last (`total` and `page` then say nothing). */
	next?: string | null;
}

/** A keyset page: its rows and the cursor that continues after them (null: there is no more). */
export function keysetPage<T>(rows: T[], next: string | null, perPage: number): Paginated<T> {
	return { $paginated: true, rows, total: rows.length, page: 1, perPage, next };
}

/** A query value as text: a key given once as `key[]=2` arrives as ["2"] and reads as "2". */
function textOf(value: unknown): string | undefined {
	if (typeof value === "string") return value;
	if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
	if (Array.isArray(value) && value.length === 1) return textOf(value[0]);
	return undefined;
}

function positiveInt(value: unknown): number | undefined {
	if (value === undefined || value === null || value === "") return undefined;
	const text = textOf(value);
	const n = typeof value === "number" ? value : text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
	return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Lenient as Kaminari: an absent, zero, negative or non-numeric value falls back to the default. */
export function parsePage(params: { page?: unknown; per_page?: unknown }): PageRequest {
	const page = positiveInt(params.page) ?? 1;
	const perPage = Math.min(positiveInt(params.per_page) ?? DEFAULT_PER_PAGE, MAX_PER_PAGE);
	return { page, perPage };
}

/** True when the caller asked for a page (lists that are whole by default then paginate). */
export function wantsPage(params: { page?: unknown; per_page?: unknown }): boolean {
	return params.page !== undefined || params.per_page !== undefined;
}

/** The rows a page holds, as the store reads them (lib/store/collection.ts#findPage). */
export function pageWindow(req: PageRequest): PageWindow {
	return { offset: (req.page - 1) * req.perPage, limit: req.perPage };
}

export function paginated<T>(rows: T[], total: number, req: PageRequest): Paginated<T> {
	return { $paginated: true, rows, total, page: req.page, perPage: req.perPage };
}

export function isPaginated(value: unknown): value is Paginated<unknown> {
	return !!value && typeof value === "object" && (value as Paginated<unknown>).$paginated === true;
}

/** Rails `to_query`: keys sorted, nested arrays as `key[]`. */
function toQuery(params: Record<string, unknown>): string {
	const parts: string[] = [];
	for (const key of Object.keys(params).sort()) {
		const value = params[key];
		if (value === undefined || value === null) continue;
		if (Array.isArray(value)) for (const v of value) parts.push(`${encodeURIComponent(key + "[]")}=${encodeURIComponent(String(v))}`);
		else {
			const text = textOf(value);
			if (text !== undefined) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
		}
	}
	return parts.join("&");
}

/**
 * @param baseUrl absolute request URL without its query string
 * @param query the request's query parameters (page and per_page are replaced)
 */
export function paginationHeaders(p: Paginated<unknown>, baseUrl: string, query: Record<string, unknown>): Record<string, string> {
	// GitLab's keyset pages say nothing but where the next one is.
	if (p.next !== undefined) return p.next === null ? {} : { Link: `<${baseUrl}?${toQuery({ ...query, cursor: p.next })}>; rel="next"` };
	const totalPages = Math.max(1, Math.ceil(p.total / p.perPage));
	const next = p.page < totalPages ? p.page + 1 : undefined;
	const prev = p.page > 1 ? Math.min(p.page - 1, totalPages) : undefined;
	const link = (page: number) => `<${baseUrl}?${toQuery({ ...query, page, per_page: p.perPage })}>`;
	const links: string[] = [];
	if (prev !== undefined) links.push(`${link(prev)}; rel="prev"`);
	if (next !== undefined) links.push(`${link(next)}; rel="next"`);
	links.push(`${link(1)}; rel="first"`, `${link(totalPages)}; rel="last"`);
	return {
		"X-Total": String(p.total),
		"X-Total-Pages": String(totalPages),
		"X-Per-Page": String(p.perPage),
		"X-Page": String(p.page),
		"X-Next-Page": next === undefined ? "" : String(next),
		"X-Prev-Page": prev === undefined ? "" : String(prev),
		Link: links.join(", "),
	};
}
