/**
 * Text formats several inputs share, each one regular expression: what a check accepts and what
 * the API description's `pattern` says are the same thing (lib/api/schema-pattern.ts).
 */

/** ISO 8601 with a time, as Date.parse reads one: the offset (or Z) is what a commit's date is shown with. */
export const ISO_TIME =
	/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T(([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?|24:00(:00(\.0{1,9})?)?)(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/;

/**
 * An http or https URL, as shown to people and peers (a project's web_url, a commit's url, an
 * integration's server): user information perhaps, a host without spaces or URL delimiters, an
 * optional port up to 65535, then any path, query or fragment.
 */
export const HTTP_URL =
	// eslint-disable-next-line no-control-regex -- control characters are what it refuses
	/^https?:\/\/([^\x00-\x20\x7f/?#@]*@)?[^\x00-\x20\x7f/?#@:[\]\\%<>^|]+(:0*(\d{0,4}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?([/?#][^\x00-\x1f\x7f]*)?$/;
