/**
 * The one outbound HTTP function the workers use (docs/integrations.md#outbound-requests): the host goes through
 * the SSRF guard and the socket connects to the address that was checked, redirects are not
 * followed, TLS is verified, and the whole exchange has a time limit and a size limit.
 */
import http from "http";
import https from "https";
import net from "net";
import { PermanentError, TransientError } from "./errors";
import { guardedLookup, isBlockedAddress, SsrfError } from "./ssrf-guard";
import { ATTR, type DeliveryOutcome } from "../tracing/attributes";
import { outboundCall } from "../tracing/outbound-span";

export interface HttpRequest {
	method: string;
	url: string;
	headers?: Record<string, string>;
	/** Sent as JSON. */
	json?: unknown;
	timeoutMs: number;
	allowLocal: boolean;
	maxResponseBytes?: number;
}

export interface HttpResponse {
	status: number;
	body: unknown;
	text: string;
}

/** Keep-alive agents whose new sockets resolve through the guard (a reused socket stays on its checked address). */
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, allowLocal: boolean): http.Agent {
	const key = `${protocol}${allowLocal}`;
	let agent = agents.get(key);
	if (!agent) {
		const options = { keepAlive: true, maxSockets: 32, lookup: guardedLookup({ allowLocal }) as never };
		agent = protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
		agents.set(key, agent);
	}
	return agent;
}

/** One request in a CLIENT span (lib/tracing/outbound-span.ts): where it went and its status, never its headers or query. */
export function requestJson(req: HttpRequest): Promise<HttpResponse> {
	let url: URL;
	try {
		url = new URL(req.url);
	} catch {
		return send(req);
	}
	const attributes = {
		[ATTR.httpMethod]: req.method,
		[ATTR.serverAddress]: url.hostname,
		[ATTR.serverPort]: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
		[ATTR.urlPath]: url.pathname,
	};
	return outboundCall(
		`HTTP ${req.method}`,
		attributes,
		() => send(req),
		res => (res ? { attributes: { [ATTR.httpStatus]: res.status }, outcome: statusOutcome(res.status) } : {}),
	);
}

async function send(req: HttpRequest): Promise<HttpResponse> {
	const url = new URL(req.url);
	if (url.protocol !== "http:" && url.protocol !== "https:") throw new PermanentError(`scheme ${url.protocol} is not allowed`);
	// An IP address never reaches the socket's `lookup`: check it here.
	const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
	if (net.isIP(host) && !req.allowLocal && isBlockedAddress(host)) throw new PermanentError(`requests to the local network are not allowed (${host})`);
	const body = req.json === undefined ? undefined : Buffer.from(JSON.stringify(req.json));
	const headers: Record<string, string | number> = { Accept: "application/json", "User-Agent": "GitLab", ...req.headers };
	if (body) Object.assign(headers, { "Content-Type": "application/json", "Content-Length": body.length });
	const limit = req.maxResponseBytes ?? 1024 * 1024;
	const lib = url.protocol === "https:" ? https : http;

	return new Promise((resolve, reject) => {
		const r = lib.request(url, { method: req.method, headers, timeout: req.timeoutMs, agent: agentFor(url.protocol, req.allowLocal) }, res => {
			const chunks: Buffer[] = [];
			let size = 0;
			res.on("data", (c: Buffer) => {
				size += c.length;
				if (size > limit) r.destroy(new PermanentError(`response from ${url.host} exceeds ${limit} bytes`));
				else chunks.push(c);
			});
			res.on("end", () => {
				const text = Buffer.concat(chunks).toString("utf8");
				let parsed: unknown = text;
				try {
					parsed = text ? JSON.parse(text) : null;
				} catch {
					/* not JSON */
				}
				resolve({ status: res.statusCode ?? 0, body: parsed, text });
			});
			res.on("error", reject);
		});
		const deadline = setTimeout(
			() => r.destroy(new TransientError(`${req.method} ${url.host}${url.pathname} timed out after ${req.timeoutMs} ms`)),
			req.timeoutMs,
		);
		r.on("timeout", () => r.destroy(new TransientError(`${req.method} ${url.host}${url.pathname} timed out after ${req.timeoutMs} ms`)));
		r.on("error", err => {
			clearTimeout(deadline);
			if (err instanceof SsrfError || err instanceof PermanentError) reject(new PermanentError(err.message));
			else if (err instanceof TransientError) reject(err);
			else reject(new TransientError(`${req.method} ${url.host}${url.pathname}: ${err.message}`));
		});
		r.on("close", () => clearTimeout(deadline));
		r.end(body);
	});
}

/** What a status makes of a delivery: 2xx delivered; 429 and 5xx failed (retried later); other statuses refused. */
export function statusOutcome(status: number): DeliveryOutcome {
	if (status >= 200 && status < 300) return "delivered";
	return status === 429 || status >= 500 ? "failed" : "refused";
}

/** 2xx passes; 429 and 5xx are transient; other statuses are permanent (statusOutcome). */
export function checkStatus(res: HttpResponse, what: string): HttpResponse {
	const outcome = statusOutcome(res.status);
	if (outcome === "delivered") return res;
	const msg = `${what}: HTTP ${res.status}`;
	if (outcome === "failed") throw new TransientError(msg, res.status);
	throw new PermanentError(msg, res.status);
}

/** Closes the kept-alive sockets (a stopping worker). */
export function closeAgents(): void {
	for (const agent of agents.values()) agent.destroy();
	agents.clear();
}
