/**
 * The in-process channel's dead letters (lib/push/in-process-channel-adapter.ts): oldest first,
 * bounded in number and in the payload bytes they hold. Beyond either bound the oldest goes; the
 * adapter finishes its group's part of the message and logs it.
 */
import type { GroupState, StoredMessage } from "./in-process-channel-state";

export interface InProcessDeadLetter {
	seq: number;
	channel: string;
	group: string;
	data: Buffer;
	headers: Record<string, string>;
	deadAt: string;
}

/** A message of one group made a dead letter, with the headers the JetStream setup gives one. */
export function deadLetterOf(m: StoredMessage, group: string, state: GroupState): InProcessDeadLetter {
	return {
		seq: m.seq,
		channel: m.channel,
		group,
		data: m.data,
		headers: { ...m.headers, "x-original-channel": m.channel, "x-original-group": group, "x-error-message": state.dead?.error ?? "" },
		deadAt: state.dead?.at ?? "",
	};
}

export class DeadLetterShelf {
	/** Oldest first. */
	readonly letters: InProcessDeadLetter[] = [];
	/** Payload bytes of the letters (counted per letter). */
	private bytes = 0;

	constructor(
		private readonly maxLetters: number,
		private readonly maxBytes: number,
	) {}

	add(letter: InProcessDeadLetter): void {
		this.letters.push(letter);
		this.bytes += letter.data.length;
	}

	/** Takes a letter off (replayed, or dropped); null when there is none. */
	remove(seq: number, group: string): InProcessDeadLetter | null {
		const i = this.letters.findIndex(d => d.seq === seq && d.group === group);
		if (i < 0) return null;
		const [letter] = this.letters.splice(i, 1);
		this.bytes -= letter.data.length;
		return letter;
	}

	/** The oldest letter while there are too many or they hold too much, with the bound it broke; else null. */
	overflowing(): { oldest: InProcessDeadLetter; over: string } | null {
		const oldest = this.letters[0];
		if (!oldest) return null;
		if (this.letters.length > this.maxLetters) return { oldest, over: `More than ${this.maxLetters} dead letters` };
		if (this.bytes > this.maxBytes) return { oldest, over: `Dead letters over ${this.maxBytes} bytes` };
		return null;
	}
}
