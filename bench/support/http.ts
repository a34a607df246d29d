/** The few API calls the benchmarks make to set up their data (JSON in, status and JSON out). */
export interface ApiReply {
	status: number;
	body: any;
	bytes: Buffer;
	headers: Headers;
}

export async function apiRequest(baseUrl: string, method: string, path: string, opts: { token?: string; json?: unknown } = {}): Promise<ApiReply> {
	const headers: Record<string, string> = {};
	if (opts.token) headers["PRIVATE-TOKEN"] = opts.token;
	if (opts.json !== undefined) headers["Content-Type"] = "application/json";
	const res = await fetch(baseUrl + path, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
	const bytes = Buffer.from(await res.arrayBuffer());
	let body: any = bytes.toString("utf8");
	try {
		body = JSON.parse(body);
	} catch {
		// not JSON: keep the text
	}
	return { status: res.status, body, bytes, headers: res.headers };
}

/** Like apiRequest, but anything but the expected status is an error naming the call. */
export async function expectStatus(
	status: number,
	baseUrl: string,
	method: string,
	path: string,
	opts: { token?: string; json?: unknown } = {},
): Promise<ApiReply> {
	const reply = await apiRequest(baseUrl, method, path, opts);
	if (reply.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${reply.status} ${reply.bytes.toString("utf8").slice(0, 300)}`);
	return reply;
}
