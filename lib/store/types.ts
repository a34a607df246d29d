/**
 * What every back end of the data-access layer shares (lib/store/collection.ts picks one): the
 * stored document, the indexes models/ declares, the find options and the errors a write raises.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored documents are open records; models/ gives them shapes
export type Doc = Record<string, any>;

export interface IndexSpec {
	/** Fields in order. */
	fields: Readonly<Record<string, 1 | -1>>;
	unique?: boolean;
	/** Unique only among documents that have the field. */
	sparse?: boolean;
	/**
	 * The store keeps how many documents hold each value of the first field, so that counting by
	 * it (one value or `$in` several) is a look-up, not a walk over the matches (the embedded
	 * store; docs/architecture.md#data-rules).
	 */
	counted?: boolean;
}

/** A collection's indexes, declared with its stored shape in models/. */
export interface CollectionOptions {
	indexes?: readonly IndexSpec[];
}

/** Where the data lives; tests point these elsewhere. */
export interface StoreLocation {
	dataDir: string;
	mongoUri: string;
}

export interface FindOptions {
	/** moleculer-db style: "-id", ["project_id", "-id"] */
	sort?: string | string[];
	offset?: number;
	limit?: number;
	/** Fields left in the store (a list that shows no content need not move it): a projection on both back ends. */
	omit?: string[];
}

/** Where a page starts and how many rows it holds (the API's pages are lib/api/pagination.ts#pageWindow). */
export interface PageWindow {
	offset: number;
	limit: number;
}

/**
 * A counter document (`{id, <field>}` in another collection) moved from `from` to `to` in the
 * same transaction as an insert (lib/builds/build-numbers.ts): nothing is written unless the
 * counter was at `from` (a counter not stored yet counts as 0).
 */
export interface CounterMove {
	collection: string;
	id: number;
	field: string;
	from: number;
	to: number;
}

/** A write that a unique index refused. */
export class UniqueViolation extends Error {
	constructor() {
		super("unique index violated");
		this.name = "UniqueViolation";
	}
}
