/** A small HTTP client for tests: status, headers and the parsed body of every answer. */
export interface Reply<T = any> {
	status: number;
	headers: Headers;
	body: T;
	text: string;
}

export interface RequestOptions {
	token?: string | null;
	/** Sent as JSON unless `form` is set. */
	body?: unknown;
	form?: Record<string, string | number | boolean>;
	headers?: Record<string, string>;
	query?: Record<string, string | number | (string | number)[]>;
}

export function client(baseUrl: string, defaultToken?: string) {
	async function request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
		const url = new URL(baseUrl.replace(/\/$/, "") + path);
		for (const [k, v] of Object.entries(opts.query ?? {})) {
			if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
			else url.searchParams.set(k, String(v));
		}
		const headers: Record<string, string> = { ...opts.headers };
		const token = opts.token === undefined ? defaultToken : opts.token;
		if (token) headers["PRIVATE-TOKEN"] = token;
		let body: string | undefined;
		if (opts.form) {
			headers["Content-Type"] = "application/x-www-form-urlencoded";
			body = new URLSearchParams(Object.entries(opts.form).map(([k, v]): [string, string] => [k, String(v)])).toString();
		} else if (opts.body !== undefined) {
			headers["Content-Type"] ??= "application/json";
			body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
		}
		const res = await fetch(url, { method, headers, body });
		const text = await res.text();
		let parsed: any = text;
		if ((res.headers.get("content-type") ?? "").includes("json")) {
			try {
				parsed = JSON.parse(text);
			} catch {
				parsed = text;
			}
		}
		return { status: res.status, headers: res.headers, body: parsed as T, text };
	}
	return {
		request,
		get: <T = any>(path: string, opts?: RequestOptions) => request<T>("GET", path, opts),
		post: <T = any>(path: string, opts?: RequestOptions) => request<T>("POST", path, opts),
		put: <T = any>(path: string, opts?: RequestOptions) => request<T>("PUT", path, opts),
		del: <T = any>(path: string, opts?: RequestOptions) => request<T>("DELETE", path, opts),
		patch: <T = any>(path: string, opts?: RequestOptions) => request<T>("PATCH", path, opts),
	};
}

export type Client = ReturnType<typeof client>;

/** Polls until `check` returns (or resolves to) a truthy value or the time is up (then throws with `what`). */
export async function waitFor<T>(
	what: string,
	check: () => T | undefined | false | Promise<T | undefined | false>,
	timeoutMs = 20000,
	everyMs = 100,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let lastError: unknown;
	while (Date.now() < deadline) {
		try {
			const value = await check();
			if (value) return value;
		} catch (err) {
			lastError = err;
		}
		await new Promise(r => setTimeout(r, everyMs));
	}
	throw new Error(`Timed out waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ""}`);
}
