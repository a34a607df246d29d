/** Label rules of GitLab 8.x, with this API's colour form (`#RRGGBB`, docs/api.md#label-entity). */
const COLOR = /^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;

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
	if (title.length > 255) errors.push("is too long (maximum is 255 characters)");
	return errors;
}

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
