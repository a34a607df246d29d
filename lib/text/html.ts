/**
 * Text shown as HTML where GitLab renders Markdown (a label's `description_html`): this service
 * renders none, so the text is escaped and each paragraph (text between blank lines) is a `<p>`,
 * its line breaks `<br>` (docs/api.md#v4-labels). Pure and linear.
 */
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, c => ESCAPES[c]);
}

/** `""` for no text. */
export function paragraphsHtml(text: string | null | undefined): string {
	if (!text?.trim()) return "";
	return text
		.replace(/\r\n?/g, "\n")
		.split(/\n[ \t]*\n/)
		.map(p => p.trim())
		.filter(p => p !== "")
		.map(p => `<p dir="auto">${escapeHtml(p).replace(/\n/g, "<br>")}</p>`)
		.join("\n");
}
