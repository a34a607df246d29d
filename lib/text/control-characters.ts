/**
 * Control characters (C0, U+0000–U+001F, and DEL) in text that reaches a line-based peer or a
 * stored single-line field: refused in input, replaced in what is sent on. One place for the
 * patterns, so every check agrees on what a control character is.
 */
/* eslint-disable no-control-regex -- matching control characters is what these patterns are for */
const RUNS = /[\x00-\x1f\x7f]+/g;
/** Text without one, whole (also the API description's `pattern` of such a field). */
export const SINGLE_LINE_TEXT = /^[^\x00-\x1f\x7f]*$/;
/** Tab, line feed and carriage return allowed: text that may span lines. */
export const MULTILINE_TEXT = /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/;
/* eslint-enable no-control-regex */

/** True when `text` holds a control character (`multiline`: tab, LF and CR are allowed). */
export function hasControlCharacters(text: string, opts: { multiline?: boolean } = {}): boolean {
	return !(opts.multiline ? MULTILINE_TEXT : SINGLE_LINE_TEXT).test(text);
}

/** Every run of control characters replaced by `by`. */
export function replaceControlCharacters(text: string, by: string): string {
	return text.replace(RUNS, by);
}
