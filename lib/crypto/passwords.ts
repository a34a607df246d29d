/** Passwords: scrypt hashes, computed off the event loop and never more than a bounded number at once. */
import crypto from "crypto";
import { promisify } from "util";

const SCRYPT_N = 16384;
const SCRYPT_KEYLEN = 32;
/** The key derivation the hasher runs (scrypt; a test may watch the work asked of it). */
export type Kdf = (password: string, salt: Buffer, keylen: number, opts: crypto.ScryptOptions) => Promise<Buffer>;
const scrypt = promisify(crypto.scrypt) as Kdf;

/**
 * What an unknown login is compared against: the same scrypt work as a real account's hash, so
 * that the time of an answer does not tell which usernames exist. No password matches it.
 */
const DUMMY_HASH = `scrypt$${SCRYPT_N}$${Buffer.alloc(16, 7).toString("base64")}$${Buffer.alloc(SCRYPT_KEYLEN).toString("base64")}`;

/** Too many password hashes are running and waiting already: the caller should come back later. */
export class HashingBusy extends Error {
	constructor() {
		super("too many password checks in progress");
		this.name = "HashingBusy";
	}
}

/**
 * Password hashing (scrypt) off the event loop, on the libuv thread pool, at most `concurrency`
 * at a time with at most `queueSize` waiting; past that, HashingBusy at once. A flood of logins
 * then costs a bounded share of the CPU and never stalls other requests or the thread pool that
 * file and DNS work share.
 */
export class PasswordHasher {
	private running = 0;
	private readonly waiting: (() => void)[] = [];

	constructor(
		private readonly concurrency: number,
		private readonly queueSize: number,
		private readonly kdf: Kdf = scrypt,
	) {}

	/** Hashes it takes at once, running and waiting; past that, HashingBusy. */
	get capacity(): number {
		return this.concurrency + this.queueSize;
	}

	async hash(password: string): Promise<string> {
		const salt = crypto.randomBytes(16);
		const hash = await this.run(() => this.kdf(password, salt, SCRYPT_KEYLEN, { N: SCRYPT_N }));
		return `scrypt$${SCRYPT_N}$${salt.toString("base64")}$${hash.toString("base64")}`;
	}

	/** Compares in constant time; `stored` null (no such account) costs the same and answers false. */
	async verify(password: string, stored: string | null): Promise<boolean> {
		const real = stored !== null;
		const [scheme, n, salt, hash] = String(stored ?? DUMMY_HASH).split("$");
		const cost = Number(n);
		if (scheme !== "scrypt" || !salt || !hash || !Number.isSafeInteger(cost) || cost < 2 || cost > 1 << 16) return false;
		const expected = Buffer.from(hash, "base64");
		if (expected.length < 16 || expected.length > 64) return false;
		const actual = await this.run(() =>
			this.kdf(password, Buffer.from(salt, "base64"), expected.length, { N: cost, maxmem: 256 * cost * 8 + 1024 * 1024 }),
		);
		return crypto.timingSafeEqual(actual, expected) && real;
	}

	private async run<T>(work: () => Promise<T>): Promise<T> {
		if (this.running >= this.concurrency) {
			if (this.waiting.length >= this.queueSize) throw new HashingBusy();
			await new Promise<void>(resolve => this.waiting.push(resolve));
		} else this.running++;
		try {
			return await work();
		} finally {
			// Hand the slot straight to the next waiter, or free it.
			const next = this.waiting.shift();
			if (next) next();
			else this.running--;
		}
	}
}
