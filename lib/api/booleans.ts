/**
 * Booleans as v4's clients send them (docs/api.md#v4): JSON's true and false, or text in any case
 * (python-gitlab writes `True` in a query string), as GitLab's Grape reads a Boolean: true, t, yes,
 * y, on, 1 and false, f, no, n, off, 0. Anything else is a 400 `<name> is invalid`.
 */
const TRUE = ["true", "t", "yes", "y", "on", "1"];
const FALSE = ["false", "f", "no", "n", "off", "0"];

/**
 * How a v4 action declares a boolean parameter (the handler reads it with `isTrue`). The pattern is
 * text, not a RegExp: an action's schema reaches a gateway in another process as JSON.
 */
export const BOOLEAN_PARAM = {
	type: "multi",
	optional: true,
	rules: [
		{ type: "boolean", convert: true },
		{ type: "string", max: 5, pattern: `^(?:${[...TRUE, ...FALSE].join("|")})$`, patternFlags: "i" },
	],
} as const;

/** What BOOLEAN_PARAM let through, as a boolean (undefined when it was not sent). */
export function isTrue(value: unknown): boolean | undefined {
	if (value === undefined || value === null) return undefined;
	if (typeof value === "boolean") return value;
	return (typeof value === "string" || typeof value === "number") && TRUE.includes(String(value).toLowerCase());
}

/** readBoolean's text (spaces around it allowed), for the API description. */
export const BOOLEAN_TEXT = new RegExp(`^\\s*(?:${[...TRUE, ...FALSE].join("|")})\\s*$`, "i");

/** A boolean as Grape reads one (JSON's, or one of the spellings above in any case); undefined for anything else. */
export function readBoolean(value: unknown): boolean | undefined {
	if (typeof value === "boolean") return value;
	if (typeof value !== "string" && typeof value !== "number") return undefined;
	const text = String(value).trim().toLowerCase();
	return TRUE.includes(text) ? true : FALSE.includes(text) ? false : undefined;
}
