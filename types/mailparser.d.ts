// mailparser 3.9.31 (pinned) ships no types; the subset the tests read.
declare module "mailparser" {
	import type { Readable } from "stream";

	export interface EmailAddress {
		address?: string;
		name: string;
	}
	export interface AddressObject {
		value: EmailAddress[];
		text: string;
		html: string;
	}
	export interface ParsedMail {
		subject?: string;
		from?: AddressObject;
		to?: AddressObject | AddressObject[];
		replyTo?: AddressObject;
		messageId?: string;
		date?: Date;
		text?: string;
		html?: string | false;
		headers: Map<string, unknown>;
	}
	export function simpleParser(source: Readable | Buffer | string): Promise<ParsedMail>;
}
