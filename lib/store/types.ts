/**
 * What every back end of the data-access layer shares (lib/store/collection.ts picks one): the
 * stored document, the indexes models/ declares, the find options and the errors a write raises.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored documents are open records; models/ gives them shapes
export type Doc = Record<string, any>;

export interface IndexSpec {
	/** Fields in order. NeDB indexes the first one only (and then never as unique). */
	fields: Readonly<Record<string, 1 | -1>>;
	unique?: boolean;
	/** Unique only among documents that have the field. */
	sparse?: boolean;
}

/** A collection's indexes, declared with its stored shape in models/. */
export interface CollectionOptions {
	indexes?: readonly IndexSpec[];
}

export interface FindOptions {
	/** moleculer-db style: "-id", ["project_id", "-id"] */
	sort?: string | string[];
	offset?: number;
	limit?: number;
	/** Fields left in the store (a list that shows no content need not move it): a projection on both back ends. */
	omit?: string[];
}

/** A write that a unique index refused. */
export class UniqueViolation extends Error {
	constructor() {
		super("unique index violated");
		this.name = "UniqueViolation";
	}
}
