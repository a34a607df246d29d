/**
 * A record id from the path as ActiveRecord's `find` takes it where GitLab 8 declared no Grape
 * type (deploy keys, snippets): digits are looked up, anything else simply finds nothing.
 */
export function recordId(raw: unknown): number | null {
	if (typeof raw !== "string" || !/^\d{1,15}$/.test(raw)) return null;
	const id = Number(raw);
	return id > 0 ? id : null;
}

/**
 * What the API description says of a record's id in a path (`openapi` of its parameter): a
 * number; one that names no record (0, or past any id) is a 404, as anything else that is no id.
 */
export const RECORD_ID_SCHEMA = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
