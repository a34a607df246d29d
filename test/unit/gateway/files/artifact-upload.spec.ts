/** A stopping gateway cuts its uploads in flight and waits for them, but never forever (gateway/files/artifact-upload.ts). */
import { PassThrough } from "stream";
import { cutUploads, type UploadInFlight } from "../../../../gateway/files/artifact-upload";

afterEach(() => jest.useRealTimers());

/** A request body as the upload reads it: its errors are the writer's to handle. */
function body(): PassThrough {
	const source = new PassThrough();
	source.on("error", () => undefined);
	return source;
}

it("destroys every upload's source and resolves once they have all settled", async () => {
	const uploads: UploadInFlight[] = [0, 1].map(() => {
		const source = body();
		// As the upload alias does: settled when its source is cut (its file removed).
		const done = new Promise<void>(resolve => source.on("close", () => resolve()));
		return { source, done };
	});
	await cutUploads(new Set(uploads));
	expect(uploads.map(u => u.source.destroyed)).toEqual([true, true]);
});

it("stops waiting after its bound when an upload never settles", async () => {
	jest.useFakeTimers();
	const stuck: UploadInFlight = { source: body(), done: new Promise<void>(() => undefined) };
	let resolved = false;
	const stopping = cutUploads([stuck], 5000).then(() => (resolved = true));
	await jest.advanceTimersByTimeAsync(4999);
	expect(resolved).toBe(false);
	await jest.advanceTimersByTimeAsync(1);
	await stopping;
	expect(resolved).toBe(true);
	expect(stuck.source.destroyed).toBe(true);
});
