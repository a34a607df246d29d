/**
 * Label rules of GitLab 8.x, with this API's colour form (`#RRGGBB`, docs/api.md#label-entity),
 * and the same rules as keywords of the parameters' JSON Schema for the API description.
 */
import { decimalUpTo, schemaPattern } from "../api/schema-pattern";
import { charCount } from "../text/chars";

const COLOR = /^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;
/** A title: not blank, no comma. */
const TITLE = /^[^,]*[^,\s][^,]*$/;
const MAX_TITLE = 255;

/** `#FA0` → `#FFAA00`; `#ffaa00` → `#FFAA00`; anything else (null, a number, an object) → null. */
export function normalizeColor(input: unknown): string | null {
	if (typeof input !== "string") return null;
	const value = input.trim();
	if (!COLOR.test(value)) return null;
	const hex = value.slice(1).toUpperCase();
	return "#" + (hex.length === 3 ? hex.replace(/./g, c => c + c) : hex);
}

/** Model errors for a label title (the API's `name`), keyed `title` as GitLab does. */
export function titleErrors(title: unknown): string[] {
	// An explicit null (JSON `"new_name": null`) is a blank title, not a missing one.
	if (typeof title !== "string") return ["can't be blank", "is invalid"];
	const errors: string[] = [];
	if (!title.trim()) errors.push("can't be blank");
	if (!/^[^,]+$/.test(title)) errors.push("is invalid");
	if (charCount(title) > MAX_TITLE) errors.push(`is too long (maximum is ${MAX_TITLE} characters)`);
	return errors;
}

/** A label's title and colour as sent (trimmed, a colour is one of COLOR), as keywords of their parameters' schema. */
export const TITLE_DOC = { maxLength: MAX_TITLE, pattern: schemaPattern(TITLE) } as const;
export const COLOR_DOC = { pattern: schemaPattern(new RegExp(`^\\s*${COLOR.source.slice(1, -1)}\\s*$`)) } as const;

/**
 * A label's new title and colour, checked once: the model errors (`{title: [...], color: [...]}`)
 * or null, and the colour in its stored form when one was given.
 */
export function checkLabel(fields: { title?: unknown; color?: unknown }): { errors: Record<string, string[]> | null; color?: string } {
	const errors: Record<string, string[]> = {};
	if (fields.title !== undefined) {
		const t = titleErrors(fields.title);
		if (t.length) errors.title = t;
	}
	const color = fields.color === undefined ? undefined : normalizeColor(fields.color);
	if (color === null) errors.color = ["must be a valid color code"];
	return { errors: Object.keys(errors).length ? errors : null, color: color ?? undefined };
}

/**
 * A whole number from 0 to 2^53 - 1 in decimal digits (what a JSON number may be, as a form sends
 * it), spaces around them, or blank. Linear: the digits are not optional inside the group, so two
 * runs of spaces never compete for one (the schema's `max` does not stop a pattern from running
 * on a megabyte).
 */
const PRIORITY_DIGITS = new RegExp(`^\\s*(?:(0+|0*${decimalUpTo(Number.MAX_SAFE_INTEGER)})\\s*)?$`);

/**
 * `priority` as a create or edit declares it (GitLab 8.16: `optional :priority, type: Integer,
 * allow_blank: true`, and LabelPriority's `>= 0`): a whole number from 0, its digits as text (a
 * form field), blank or null. Anything else is a 400 `priority is invalid` at the gateway.
 */
export const PRIORITY_PARAM = {
	type: "multi",
	optional: true,
	nullable: true,
	rules: [
		{ type: "number", integer: true, min: 0, max: Number.MAX_SAFE_INTEGER },
		{ type: "string", max: 64, pattern: PRIORITY_DIGITS.source },
	],
} as const;

/**
 * A label's priority from what PRIORITY_PARAM let through: undefined when it was not sent, null
 * when blank or null (no priority: the edit clears it), else the number; "invalid" for anything
 * else (a caller that skipped the schema).
 */
export function labelPriority(raw: unknown): number | null | undefined | "invalid" {
	if (raw === undefined) return undefined;
	if (raw === null) return null;
	if (typeof raw === "number") return Number.isSafeInteger(raw) && raw >= 0 ? raw : "invalid";
	if (typeof raw !== "string") return "invalid";
	const digits = PRIORITY_DIGITS.exec(raw);
	if (!digits) return "invalid";
	return digits[1] === undefined ? null : Number(digits[1]);
}

/**
 * The text colour GitLab shows on a label of this background (`#RRGGBB`): dark on light colours,
 * white on dark ones (its `text_color_for_bg`: the three channels' sum above 500 is light).
 */
export function textColorFor(color: string): string {
	const hex = /^#([0-9A-Fa-f]{6})$/.exec(color)?.[1];
	if (!hex) return "#FFFFFF";
	const sum = [0, 2, 4].reduce((total, at) => total + parseInt(hex.slice(at, at + 2), 16), 0);
	return sum > 500 ? "#333333" : "#FFFFFF";
}
