/** A URL (or a comma-separated list of them) as a log line or an error may repeat it: without user and password. */
export function withoutCredentials(text: string): string {
	return text.replace(/\/\/[^/@\s]*@/g, "//<credentials>@");
}
