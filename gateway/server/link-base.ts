/**
 * The absolute URL that pagination links (`Link`) point at. With GITLAB_URL set, that address;
 * otherwise the request's Host when it is a well-formed `host[:port]` (so links work for a client
 * on localhost:3000), else GITLAB_URL's default. An invalid Host never reaches a header, and the
 * path is percent-encoded where it holds anything a URL may not.
 */
const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const IPV6_LITERAL = /^\[[0-9a-f:.]+\]$/i;

/** `example.com`, `127.0.0.1:3000`, `[::1]:8080`: a host and an optional port 1–65535. */
export function isValidHost(host: string): boolean {
	if (host.length > 300) return false;
	const m = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(host);
	if (!m) return false;
	const [, name, port] = m;
	if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return false;
	return IPV6_LITERAL.test(name) || (name.length <= 253 && HOST_NAME.test(name));
}

/** Only the characters a URL path may hold as they are; everything else percent-encoded. */
export function safePath(path: string): string {
	return path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%/]/g, c => encodeURIComponent(c));
}

export interface LinkBaseOptions {
	gitlabUrl: string;
	gitlabUrlSet: boolean;
	/** `https` when a trusted proxy says the client used TLS. */
	scheme: "http" | "https";
}

/** The request's URL without its query, as an absolute URL for `Link` headers. */
export function linkBase(host: string | undefined, originalUrl: string, opts: LinkBaseOptions): string {
	const path = safePath(originalUrl.split("?")[0] || "/");
	if (!opts.gitlabUrlSet && host && isValidHost(host)) return `${opts.scheme}://${host}${path}`;
	return `${opts.gitlabUrl}${path}`;
}
