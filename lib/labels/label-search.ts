/**
 * v4's `GET /projects/:id/labels?search=` as a store query, pure (docs/api.md#v4-labels): GitLab's
 * `Label.search` (its `fuzzy_search` over the title and the description). The text is split into
 * words, a `"quoted phrase"` being one; the words of three characters or more must all be found, in
 * any case, in the title, or all in the description. When no word is that long, the whole text must
 * be the title or the description, in any case.
 */
import { containsPattern } from "../accounts/listing";

/** Longest `search` taken (as the projects' and users' lists take): longer than any title, and a bounded pattern. */
export const MAX_LABEL_SEARCH = 255;

/** GitLab's `MIN_CHARS_FOR_PARTIAL_MATCHING`: shorter words are not looked for inside a field. */
const MIN_PARTIAL = 3;

const SEARCHED = ["title", "description"] as const;

type Query = Record<string, unknown>;

/** The words GitLab matches inside the fields: quoted phrases and the other words, each three characters or more. */
export function searchWords(text: string): string[] {
	const squished = text.trim().replace(/\s+/g, " ");
	const quoted = squished.match(/"[^"]+"/g) ?? [];
	const rest = quoted.reduce((left, phrase) => left.replace(phrase, ""), squished);
	return [...rest.split(" ").filter(Boolean), ...quoted.map(phrase => phrase.slice(1, -1))].filter(word => word.length >= MIN_PARTIAL);
}

/** The labels `text` finds, as a condition on the stored label; null for a blank text (every label, as GitLab's `search.present?`). */
export function labelSearch(text: string | undefined): Query | null {
	const squished = (text ?? "").trim().replace(/\s+/g, " ");
	if (!squished) return null;
	const words = searchWords(squished);
	if (!words.length) {
		const whole = { $regex: new RegExp(`^${containsPattern(squished).$regex.source}$`, "i") };
		return { $or: SEARCHED.map(field => ({ [field]: whole })) };
	}
	const inField = (field: string): Query =>
		words.length === 1 ? { [field]: containsPattern(words[0]) } : { $and: words.map(w => ({ [field]: containsPattern(w) })) };
	return { $or: SEARCHED.map(inField) };
}
