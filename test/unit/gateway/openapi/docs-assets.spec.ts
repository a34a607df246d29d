/**
 * The API reference's static files (gateway/openapi/docs.routes.ts): a client that stops reading a
 * file and leaves does not keep the file open.
 */
import type { ServerResponse } from "http";
import { Writable } from "stream";
import { docsRoutes } from "../../../../gateway/openapi/docs.routes";
import { waitFor } from "../../../support/http";
import { openFiles } from "../../../support/open-files";

const BUNDLE = "swagger-ui-bundle.js";
const openOnBundle = () => openFiles(file => file.endsWith(BUNDLE));

it("closes the file when the client leaves before it has read it all", async () => {
	const asset = (docsRoutes.docs as Record<string, (req: object, res: ServerResponse) => void>)["GET /docs/assets/:file"];
	const before = openOnBundle();
	for (let i = 0; i < 5; i++) {
		let wrote!: () => void;
		const written = new Promise<void>(resolve => (wrote = resolve));
		// A response whose client stopped reading: no write ever completes; then the client goes.
		const res = new Writable({ highWaterMark: 16 * 1024, write: () => wrote() }) as unknown as ServerResponse;
		res.writeHead = () => res;
		asset({ $params: { file: BUNDLE }, headers: {}, url: `/api/v3/docs/assets/${BUNDLE}` }, res);
		await written;
		expect(openOnBundle()).toBe(before + 1);
		res.destroy();
		await waitFor("the file to be closed", () => openOnBundle() === before, 5000, 10);
	}
});
