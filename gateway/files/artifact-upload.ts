/**
 * `PUT /internal/builds/:build_id/artifacts?filename=NAME`: the body goes from the client straight
 * into the artifact store, written by the gateway (lib/builds/upload-leases.ts has the three steps):
 * the builds service authorizes the upload before a byte is read, the gateway streams the body
 * into a temporary object under MAX_ARTIFACT_BYTES, and the builds service commits it. The bytes
 * never cross the transporter, and nothing is visible before the commit: a refused, oversized,
 * short or interrupted upload (a client that goes away, a gateway that stops) leaves nothing.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Context } from "moleculer";
import type { Readable } from "stream";
import { badRequest, tooLarge } from "../../lib/api/errors";
import { ArtifactIncomplete, ArtifactInterrupted, ArtifactTooLarge } from "../../lib/builds/artifact-errors";
import type { ArtifactStorage } from "../../lib/builds/artifact-storage";
import type { UploadCommit, UploadLease } from "../../lib/builds/upload-leases";
import { sendContinue } from "../server/http-server";
import { SENDS_CONTINUE } from "../server/routing";
import type { AliasFunction } from "../server/routing";

type Req = IncomingMessage & { $ctx: Context; $params: Record<string, unknown> };

export interface UploadInFlight {
	source: Readable;
	done: Promise<void>;
}

/** What the upload alias needs of the gateway service it runs in (`this`). */
interface UploadHost {
	artifactStore: ArtifactStorage;
	/** Uploads being written, so that a stopping gateway cuts them and removes their files. */
	uploadsInFlight: Set<UploadInFlight>;
	sendResponse(req: IncomingMessage, res: ServerResponse, data: unknown, action?: unknown): void;
}

/** A write that failed for what the client sent, as GitLab answers it; anything else as it is. */
function asHttpError(err: unknown): unknown {
	if (err instanceof ArtifactTooLarge) return tooLarge();
	if (err instanceof ArtifactIncomplete || err instanceof ArtifactInterrupted) return badRequest(`400 (Bad request) ${err.message}`);
	return err;
}

/**
 * The alias function; `authorize` and `commit` are the builds service's two steps. It carries
 * `action: authorize` so that the API description and the tests that enumerate routes see the
 * parameters and the service behind it.
 */
export function artifactUpload(authorize: string, commit: string, opts: { timeout?: number } = {}): AliasFunction {
	const callOpts = opts.timeout ? { timeout: opts.timeout } : {};
	const upload = function upload(this: UploadHost, req: Req, res: ServerResponse, next: (err?: unknown) => void) {
		let finished!: () => void;
		const inFlight: UploadInFlight = { source: req, done: new Promise<void>(resolve => (finished = resolve)) };
		this.uploadsInFlight.add(inFlight);
		return receive(this, req, authorize, commit, callOpts)
			.then(
				build => this.sendResponse(req, res, build),
				err => next(asHttpError(err)),
			)
			.finally(() => {
				this.uploadsInFlight.delete(inFlight);
				finished();
			});
	};
	// It sends `100 Continue` once the upload is authorized, not the server on arrival.
	return Object.assign(upload, { action: authorize, [SENDS_CONTINUE]: true });
}

async function receive(host: UploadHost, req: Req, authorize: string, commit: string, callOpts: object): Promise<unknown> {
	const ctx = req.$ctx;
	const lease = await ctx.call<UploadLease, Record<string, unknown>>(authorize, { build_id: req.$params.build_id, filename: req.$params.filename }, callOpts);
	// The client may have left while the upload was authorized: nothing to read, no file to make.
	if (req.readableAborted) throw new ArtifactInterrupted();
	// Authorized: a client waiting on `Expect: 100-continue` may send the body now.
	sendContinue(req);
	const length = req.headers["content-length"];
	const pending = await host.artifactStore.writeUpload({ projectId: lease.project_id, buildId: lease.build_id }, req, {
		expectedBytes: length === undefined ? undefined : Number(length),
	});
	try {
		const params: UploadCommit = { build_id: lease.build_id, filename: lease.filename, upload: pending.upload, size: pending.size };
		return await ctx.call(commit, params, callOpts);
	} catch (err) {
		// The builds service removes what it was given; this covers a commit that never reached it.
		await host.artifactStore.discardUpload(pending.upload);
		throw err;
	}
}

/** How long a stopping gateway waits for its cut uploads to remove their files (a removal is quick). */
const UPLOADS_STOP_WAIT_MS = 10_000;

/**
 * Cuts every upload in flight (its file is removed) and waits for them, at most `waitMs`: a stop
 * never hangs on one that does not settle.
 */
export async function cutUploads(uploads: Iterable<UploadInFlight>, waitMs = UPLOADS_STOP_WAIT_MS): Promise<void> {
	const cut = [...uploads];
	for (const upload of cut) upload.source.destroy(new Error("the gateway is stopping"));
	let timer: NodeJS.Timeout | undefined;
	const deadline = new Promise<void>(resolve => (timer = setTimeout(resolve, waitMs)));
	await Promise.race([Promise.allSettled(cut.map(u => u.done)), deadline]);
	clearTimeout(timer);
}
