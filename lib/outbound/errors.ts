/**
 * How an outbound delivery failed, which decides what happens next: a TransientError is retried
 * later (the push channel's backoff), a PermanentError is logged and not retried (it would fail
 * the same way again).
 */
/** A failure worth retrying later: network errors, timeouts, 5xx, 429. */
export class TransientError extends Error {
	constructor(
		message: string,
		readonly status?: number,
	) {
		super(message);
		this.name = "TransientError";
	}
}

/** A failure that will not go away by retrying: a refused target, 4xx. */
export class PermanentError extends Error {
	constructor(
		message: string,
		readonly status?: number,
	) {
		super(message);
		this.name = "PermanentError";
	}
}
