/**
 * A record id from the path as ActiveRecord's `find` takes it where GitLab 8 declared no Grape
 * type (deploy keys, snippets): digits are looked up, anything else simply finds nothing.
 */
export function recordId(raw: unknown): number | null {
	if (typeof raw !== "string" || !/^\d{1,15}$/.test(raw)) return null;
	const id = Number(raw);
	return id > 0 ? id : null;
}
