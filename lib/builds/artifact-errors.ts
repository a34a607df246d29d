/** What can go wrong with an artifacts upload, as the store, the gateway and builds tell it apart. */

/** The upload went past the size limit; nothing was stored. */
export class ArtifactTooLarge extends Error {
	constructor(readonly limit: number) {
		super(`artifacts larger than ${limit} bytes`);
		this.name = "ArtifactTooLarge";
	}
}

/** The upload ended before the announced length arrived; nothing was stored. */
export class ArtifactIncomplete extends Error {
	constructor(
		readonly expected: number,
		readonly received: number,
	) {
		super(`artifacts upload ended after ${received} of ${expected} bytes`);
		this.name = "ArtifactIncomplete";
	}
}

/** The source failed or stopped before its end (a client that went away); nothing was stored. */
export class ArtifactInterrupted extends Error {
	constructor(readonly reason?: Error) {
		super(reason?.message ? `artifacts upload interrupted: ${reason.message}` : "artifacts upload interrupted");
		this.name = "ArtifactInterrupted";
	}
}

/** The upload's own name has gone (discarded, or swept as stale) before it was committed. */
export class UploadGone extends Error {
	constructor(readonly upload: string) {
		super(`no upload ${upload} in progress`);
		this.name = "UploadGone";
	}
}

/** An append would take the trace past its limit; nothing was appended. */
export class TraceTooLarge extends Error {
	constructor(readonly limit: number) {
		super(`trace larger than ${limit} bytes`);
		this.name = "TraceTooLarge";
	}
}

/** Appends kept taking the trace's next place before this one could (the S3 store's conditional writes); nothing was appended. */
export class TraceBusy extends Error {
	constructor() {
		super("the trace kept changing under the append");
		this.name = "TraceBusy";
	}
}
