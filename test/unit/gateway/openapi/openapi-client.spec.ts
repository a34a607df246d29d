/**
 * The typed client's types (test/support/openapi/gitlab-api.ts) are what openapi-typescript makes
 * of the document the gateway serves now: a change of the document regenerates them, and the
 * typecheck then tells every call that no longer fits.
 */
import fs from "fs";
import { CLIENT_TYPES, clientTypes, writtenClientTypes } from "../../../support/openapi-client";

it("keeps the client's types those of the current document", () => {
	const current = clientTypes();
	if (process.env.OPENAPI_CLIENT_WRITE) fs.writeFileSync(CLIENT_TYPES, current);
	// Regenerate with OPENAPI_CLIENT_WRITE=1 npx jest test/unit/gateway/openapi/openapi-client.spec.ts
	expect(writtenClientTypes() === current).toBe(true);
	expect(current).toContain('"/api/v4/projects/{id}/labels"');
}, 60000);
