/**
 * How config/index.ts reads one variable: each parser gives the default when it is unset or empty
 * and throws a ConfigError naming the variable when its value is bad.
 */
import net from "net";
import { withoutCredentials } from "./credentials";

export class ConfigError extends Error {
	constructor(variable: string, value: string, expected: string) {
		super(`Invalid configuration: ${variable}=${JSON.stringify(value)} (expected ${expected})`);
		this.name = "ConfigError";
	}
}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, fallback = ""): string {
	const v = env[name];
	return v === undefined || v === "" ? fallback : v;
}

export function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, raw, `an integer from ${min} to ${max}`);
	const n = Number(raw);
	if (n < min || n > max) throw new ConfigError(name, raw, `an integer from ${min} to ${max}`);
	return n;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	if (/^(true|1|yes)$/i.test(raw)) return true;
	if (/^(false|0|no)$/i.test(raw)) return false;
	throw new ConfigError(name, raw, "true or false");
}

export function url(env: Env, name: string, schemes: string[], fallback = ""): string {
	const raw = str(env, name, fallback);
	if (!raw) return raw;
	const invalid = () => new ConfigError(name, withoutCredentials(raw), `a URL with scheme ${schemes.join(" or ")}`);
	// Several comma-separated URLs are allowed for NATS clusters.
	for (const part of raw.split(",")) {
		let parsed: URL;
		try {
			parsed = new URL(part.trim());
		} catch {
			throw invalid();
		}
		if (!schemes.includes(parsed.protocol.replace(/:$/, ""))) throw invalid();
	}
	return raw;
}

/**
 * A MongoDB connection string. A replica set lists several hosts (`mongodb://u:p@a:27017,b:27017/db`),
 * which is not one WHATWG URL, so only the form is checked here; the driver parses the rest. The
 * value carries credentials, so an error does not repeat it.
 */
export function mongoUri(env: Env, name: string): string {
	const raw = str(env, name);
	if (raw && !/^mongodb(\+srv)?:\/\/[^\s/?#]+(\/[^\s]*)?$/.test(raw))
		throw new ConfigError(name, "<hidden>", "a mongodb:// or mongodb+srv:// connection string");
	return raw;
}

export function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
	const raw = str(env, name, fallback);
	if (!values.includes(raw as T)) throw new ConfigError(name, raw, `one of ${values.join(", ")}`);
	return raw as T;
}

const BYTE_UNITS: Record<string, number> = { "": 1, b: 1, kb: 1024, k: 1024, mb: 1024 ** 2, m: 1024 ** 2, gb: 1024 ** 3, g: 1024 ** 3 };

export function bytes(env: Env, name: string, fallback: number): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	const m = /^(\d+)\s*([a-z]*)$/i.exec(raw.trim());
	if (!m || !(m[2].toLowerCase() in BYTE_UNITS)) throw new ConfigError(name, raw, "a size such as 1048576, 512kb or 1mb");
	return Number(m[1]) * BYTE_UNITS[m[2].toLowerCase()];
}

/** A comma-separated list, entries trimmed, empty ones dropped. */
export function list(env: Env, name: string): string[] {
	return str(env, name)
		.split(",")
		.map(part => part.trim())
		.filter(Boolean);
}

/**
 * A comma-separated list of IP addresses and CIDR blocks (`10.0.0.0/8, fd00::/8, 192.0.2.7`),
 * normalised to `address/bits` entries. Nothing else is accepted.
 */
export function cidrList(env: Env, name: string): string[] {
	const raw = str(env, name);
	return list(env, name).map(part => {
		const [address, bitsText, extra] = part.split("/");
		const family = net.isIP(address);
		const maxBits = family === 4 ? 32 : 128;
		const bits = bitsText === undefined ? maxBits : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
		const valid = family && extra === undefined && bits >= 0 && bits <= maxBits;
		if (!valid) throw new ConfigError(name, raw, "IP addresses or CIDR blocks, comma-separated");
		return `${address}/${bits}`;
	});
}

/** A fraction from 0 to 1 (a sampling ratio). */
export function fraction(env: Env, name: string, fallback: number): number {
	const raw = env[name];
	if (raw === undefined || raw === "") return fallback;
	const n = /^\s*(0(\.\d+)?|1(\.0+)?|\.\d+)\s*$/.test(raw) ? Number(raw) : NaN;
	if (!(n >= 0 && n <= 1)) throw new ConfigError(name, raw, "a number from 0 to 1");
	return n;
}

/** OTEL_RESOURCE_ATTRIBUTES: `key=value,…`, values percent-encoded (the OpenTelemetry format). */
export function resourceAttributes(env: Env, name: string): Record<string, string> {
	const attributes: Record<string, string> = {};
	for (const pair of list(env, name)) {
		const at = pair.indexOf("=");
		let value: string | null;
		try {
			value = at > 0 ? decodeURIComponent(pair.slice(at + 1).trim()) : null;
		} catch {
			value = null;
		}
		if (value === null) throw new ConfigError(name, str(env, name), "key=value pairs, comma-separated");
		attributes[pair.slice(0, at).trim()] = value;
	}
	return attributes;
}
