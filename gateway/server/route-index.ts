/**
 * moleculer-web's alias resolution, the first alias in its order whose method and path match, made
 * without trying each alias's pattern in turn: aliases are filed by what a path that matches them
 * begins with, how many segments it has and what it ends with, and only the aliases a path's shape
 * can match are tried, in moleculer-web's order (docs/architecture.md#the-route-index). Same first
 * match, same decoding errors, a few patterns tried instead of the table.
 */
import type { AliasLike, FoundRoute } from "./routing";

/** A moleculer-web alias, as far as resolving reads it. */
export interface IndexedAlias extends AliasLike {
	method: string;
	route?: { opts?: { name?: string; pathToRegexpOptions?: object } };
	match(url: string): Record<string, unknown> | false;
}

/** How many methods get an index: a request's method is one of the few HTTP has, anything else is tried alias by alias. */
const MAX_INDEXED_METHODS = 16;
/** How many leading segments make a path's head (`api/v3/projects`). */
const HEAD_SEGMENTS = 3;
/** A segment path-to-regexp reads as plain text (no parameter, group, wildcard or escape in it). */
const LITERAL = /^[A-Za-z0-9._~-]+$/;
/** A whole segment that is one named parameter: it matches any one non-empty segment. */
const PARAM = /^:[A-Za-z_$][A-Za-z0-9_$]*$/;
const SLASH = 47;

/** A path's shape, lower-cased as the patterns match (one trailing slash allowed): its head, its segment count, its last segment. */
interface Shape {
	head: string;
	count: number;
	last: string;
}

/** The shape of `path`, read without splitting it (this runs for every request). */
function shapeOf(path: string): Shape {
	let end = path.length;
	if (end > 1 && path.charCodeAt(end - 1) === SLASH) end--;
	let count = 1;
	let headEnd = end;
	for (let i = 1; i < end; i++) {
		if (path.charCodeAt(i) !== SLASH) continue;
		if (count === HEAD_SEGMENTS) headEnd = i;
		count++;
	}
	const head = path.slice(1, headEnd).toLowerCase();
	const last = count > HEAD_SEGMENTS ? path.slice(path.lastIndexOf("/", end - 1) + 1, end).toLowerCase() : "";
	return { head, count, last };
}

/**
 * Where an alias is filed: under its head always; under its segment count when it matches only
 * paths of that count (plain segments and whole-segment parameters), and under its last segment
 * when that one is plain too; with the fewest segments a path it matches has otherwise. None: its
 * pattern can match paths of any head, and it is tried for every path.
 */
interface Filing {
	head: string;
	count?: number;
	last?: string;
	fewest?: number;
}

function filingOf(alias: IndexedAlias): Filing | undefined {
	const options = alias.route?.opts?.pathToRegexpOptions;
	const path = alias.fullPath;
	if ((options && Object.keys(options).length > 0) || !path?.startsWith("/")) return undefined;
	const segments = path.slice(1).split("/");
	if (!segments.slice(0, HEAD_SEGMENTS).every(s => LITERAL.test(s))) return undefined;
	const { head, count, last } = shapeOf(path);
	if (!segments.every(s => LITERAL.test(s) || PARAM.test(s))) return { head, fewest: path.includes("{") ? 0 : count };
	return count > HEAD_SEGMENTS && LITERAL.test(segments[count - 1]) ? { head, count, last } : { head, count };
}

/** The aliases a path of one shape can match, each list in moleculer-web's order. */
interface CountIndex {
	byLast: Map<string, IndexedAlias[]>;
	/** For a last segment no alias of this count names. */
	otherLast: IndexedAlias[];
}
interface HeadIndex {
	byCount: Map<number, CountIndex>;
	/** For a segment count no plain alias of this head has. */
	otherCount: IndexedAlias[];
}
interface MethodIndex {
	byHead: Map<string, HeadIndex>;
	/** For a head no alias is filed under: those tried for any path. */
	otherHead: IndexedAlias[];
}

/** The aliases `method` may reach, in order: moleculer-web's rule (`*` takes any method). */
const aliasesOfMethod = (aliases: readonly IndexedAlias[], method: string) => aliases.filter(alias => alias.method === "*" || alias.method === method);

function indexOf(aliases: readonly IndexedAlias[], method: string): MethodIndex {
	const ofMethod = aliasesOfMethod(aliases, method);
	const filings = new Map(ofMethod.map(alias => [alias, filingOf(alias)]));
	/** The aliases a path of this head, count and last segment can match, in order. */
	const matchable = (head: string | undefined, count: number, last?: string) =>
		ofMethod.filter(alias => {
			const filed = filings.get(alias);
			if (!filed) return true;
			if (filed.head !== head) return false;
			if (filed.count === undefined) return (filed.fewest ?? 0) <= count;
			return filed.count === count && (filed.last === undefined || filed.last === last);
		});
	const index: MethodIndex = { byHead: new Map(), otherHead: matchable(undefined, 0) };
	for (const filed of filings.values()) {
		if (!filed) continue;
		let head = index.byHead.get(filed.head);
		if (!head) index.byHead.set(filed.head, (head = { byCount: new Map(), otherCount: matchable(filed.head, Infinity) }));
		if (filed.count === undefined) continue;
		let count = head.byCount.get(filed.count);
		if (!count) head.byCount.set(filed.count, (count = { byLast: new Map(), otherLast: matchable(filed.head, filed.count) }));
		if (filed.last !== undefined && !count.byLast.has(filed.last)) count.byLast.set(filed.last, matchable(filed.head, filed.count, filed.last));
	}
	return index;
}

/** The index of one alias table, made again when moleculer-web makes a new table (it does when services come and go). */
export class RouteIndex {
	private table: readonly IndexedAlias[] | undefined;
	private tableLength = 0;
	private first: IndexedAlias | undefined;
	private last: IndexedAlias | undefined;
	private readonly methods = new Map<string, MethodIndex>();

	/** As moleculer-web's `resolveAlias(url, method)` over `aliases`: the first alias that matches, with its parameters; false when none does. */
	resolve(aliases: readonly IndexedAlias[], url: string, method: string): FoundRoute | false {
		for (const alias of this.candidates(aliases, url, method)) {
			const params = alias.match(url);
			if (params) return { alias, params };
		}
		return false;
	}

	/** The aliases that can match `url`, in moleculer-web's order. */
	private candidates(aliases: readonly IndexedAlias[], url: string, method: string): readonly IndexedAlias[] {
		const indexes = this.current(aliases);
		let index = indexes.get(method);
		if (!index) {
			if (indexes.size >= MAX_INDEXED_METHODS) return aliasesOfMethod(aliases, method);
			index = indexOf(aliases, method);
			indexes.set(method, index);
		}
		const shape = shapeOf(url);
		const head = index.byHead.get(shape.head);
		if (!head) return index.otherHead;
		const count = head.byCount.get(shape.count);
		if (!count) return head.otherCount;
		return count.byLast.get(shape.last) ?? count.otherLast;
	}

	/** The per-method indexes of `aliases`, forgotten when it is not the table they were made from. */
	private current(aliases: readonly IndexedAlias[]): Map<string, MethodIndex> {
		const same = aliases === this.table && aliases.length === this.tableLength && aliases[0] === this.first && aliases[aliases.length - 1] === this.last;
		if (!same) {
			this.methods.clear();
			this.table = aliases;
			this.tableLength = aliases.length;
			this.first = aliases[0];
			this.last = aliases[aliases.length - 1];
		}
		return this.methods;
	}
}
