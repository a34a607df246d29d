/** How many characters (code points) `text` holds: an emoji is one, as Ruby's `length` and JSON Schema's `maxLength` count. */
export function charCount(text: string): number {
	let count = 0;
	for (const _char of text) count++;
	return count;
}
