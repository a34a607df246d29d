/** Where a GitLab v3 client puts its token: header, query, form body or Bearer. */
import type { IncomingMessage } from "http";

type Req = IncomingMessage & { query?: Record<string, unknown>; body?: unknown };

export function extractToken(req: Req): string | null {
	const header = req.headers["private-token"];
	if (typeof header === "string" && header) return header.trim();
	const auth = req.headers.authorization;
	if (typeof auth === "string") {
		const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
		if (m) return m[1];
	}
	const fromQuery = req.query?.private_token;
	if (typeof fromQuery === "string" && fromQuery) return fromQuery;
	const body = req.body as Record<string, unknown> | undefined;
	if (body && typeof body === "object" && typeof body.private_token === "string" && body.private_token) return body.private_token;
	return null;
}
