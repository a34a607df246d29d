/**
 * Text formats several inputs share, each one regular expression: what a check accepts and what
 * the API description's `pattern` says are the same thing (lib/api/schema-pattern.ts).
 */

/** ISO 8601 with a time, as Date.parse reads one: the offset (or Z) is what a commit's date is shown with. */
export const ISO_TIME =
	/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T(([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?|24:00(:00(\.0{1,9})?)?)(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/;

/**
 * The characters beyond ASCII that Unicode's compatibility mapping (NFKC) turns into what a URL's
 * authority cannot hold — a space, a control, `/ ? # @ : [ ] \ % < > ^ |` — as a class's members:
 * the URL standard maps a host's characters before reading it (so `new URL` refuses such a host),
 * and Python's urlsplit refuses them anywhere before the path. test/unit/lib/text/formats.spec.ts
 * recomputes the list from this Node's Unicode.
 */
export const NFKC_URL_DELIMITERS =
	"\\u00a0\\u00a8\\u00af\\u00b4\\u00b8\\u02d8-\\u02dd\\u037a\\u0384-\\u0385\\u1fbd\\u1fbf-\\u1fc1\\u1fcd-\\u1fcf\\u1fdd-\\u1fdf" +
	"\\u1fed-\\u1fee\\u1ffd-\\u1ffe\\u2000-\\u200a\\u2017\\u202f\\u203e\\u2047-\\u2049\\u205f\\u2100-\\u2101\\u2105-\\u2106\\u2a74" +
	"\\u3000\\u309b-\\u309c\\ufc5e-\\ufc63\\ufdfa-\\ufdfb\\ufe13\\ufe16\\ufe47-\\ufe4c\\ufe55-\\ufe56\\ufe5f\\ufe64-\\ufe65\\ufe68" +
	"\\ufe6a-\\ufe6b\\ufe70\\ufe72\\ufe74\\ufe76\\ufe78\\ufe7a\\ufe7c\\ufe7e\\uff03\\uff05\\uff0f\\uff1a\\uff1c\\uff1e-\\uff20" +
	"\\uff3b-\\uff3e\\uff5c\\uffe3";

/**
 * An http or https URL, as shown to people and peers (a project's web_url, a commit's url, an
 * integration's server): user information perhaps, a host without spaces or URL delimiters, an
 * optional port up to 65535, then any path, query or fragment. Neither the user information nor
 * the host holds a bracket (an IPv6 literal is not taken) or a character NFKC makes a delimiter.
 */
export const HTTP_URL = new RegExp(
	"^https?://" +
		`([^\\x00-\\x20\\x7f/?#@[\\]${NFKC_URL_DELIMITERS}]*@)?` +
		`[^\\x00-\\x20\\x7f/?#@:[\\]\\\\%<>^|${NFKC_URL_DELIMITERS}]+` +
		"(:0*(\\d{0,4}|[1-5]\\d{4}|6[0-4]\\d{3}|65[0-4]\\d{2}|655[0-2]\\d|6553[0-5]))?" +
		"([/?#][^\\x00-\\x1f\\x7f]*)?$",
);
