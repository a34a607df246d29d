/**
 * Real SSH keys for tests: made by `ssh-keygen` in a temporary directory, with the size and
 * MD5 fingerprint `ssh-keygen -l -E md5` prints for them.
 */
import { execFile, spawnSync } from "child_process";
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { promisify } from "util";

// Asynchronous on purpose: a blocked event loop (a 4096-bit key takes seconds) keeps the HTTP
// client from noticing keep-alive sockets the server closed meanwhile.
const run = promisify(execFile);

export interface GeneratedKey {
	name: string;
	/** The key type as written in the key line. */
	type: string;
	/** The `.pub` line: type, base64 body and comment. */
	line: string;
	bits: number;
	fingerprint: string;
}

export const KEYGEN_TYPES: { name: string; args: string[]; type: string }[] = [
	{ name: "rsa-2048", args: ["-t", "rsa", "-b", "2048"], type: "ssh-rsa" },
	{ name: "rsa-4096", args: ["-t", "rsa", "-b", "4096"], type: "ssh-rsa" },
	{ name: "dsa", args: ["-t", "dsa"], type: "ssh-dss" },
	{ name: "ecdsa-256", args: ["-t", "ecdsa", "-b", "256"], type: "ecdsa-sha2-nistp256" },
	{ name: "ecdsa-384", args: ["-t", "ecdsa", "-b", "384"], type: "ecdsa-sha2-nistp384" },
	{ name: "ecdsa-521", args: ["-t", "ecdsa", "-b", "521"], type: "ecdsa-sha2-nistp521" },
	{ name: "ed25519", args: ["-t", "ed25519"], type: "ssh-ed25519" },
];

export class KeyFactory {
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "ssh-keys-"));
	private count = 0;

	/** A new key pair of the given kind; the comment is `<name>@test host` unless given. */
	async generate(name: string, comment = `${name}@test host`): Promise<GeneratedKey> {
		const kind = KEYGEN_TYPES.find(k => k.name === name);
		if (!kind) throw new Error(`unknown key kind ${name}`);
		const file = path.join(this.dir, `${name}-${++this.count}`);
		await run("ssh-keygen", ["-q", ...kind.args, "-N", "", "-C", comment, "-f", file]);
		const line = fs.readFileSync(`${file}.pub`, "utf8").trim();
		const { stdout: printed } = await run("ssh-keygen", ["-l", "-E", "md5", "-f", `${file}.pub`], { encoding: "utf8" });
		const m = /^(\d+) MD5:([0-9a-f:]+) /.exec(printed);
		if (!m) throw new Error(`unexpected ssh-keygen output: ${printed}`);
		return { name, type: kind.type, line, bits: Number(m[1]), fingerprint: m[2] };
	}

	/** One key of every supported kind. */
	async all(): Promise<Record<string, GeneratedKey>> {
		const made = await Promise.all(KEYGEN_TYPES.map(k => this.generate(k.name)));
		return Object.fromEntries(made.map(k => [k.name, k]));
	}

	/**
	 * What `ssh-keygen -l -E md5` makes of several lines at once, by the label each line
	 * carries as its comment (lines it refuses are absent).
	 */
	fingerprints(lines: string[]): Map<string, { bits: number; fingerprint: string }> {
		const file = path.join(this.dir, `batch-${crypto.randomUUID()}.pub`);
		fs.writeFileSync(file, lines.join("\n") + "\n");
		const out = spawnSync("ssh-keygen", ["-l", "-E", "md5", "-f", file], { encoding: "utf8" });
		const result = new Map<string, { bits: number; fingerprint: string }>();
		for (const row of out.stdout.split("\n")) {
			const m = /^(\d+) MD5:([0-9a-f:]{47}) (\S+) \(/.exec(row);
			if (m) result.set(m[3], { bits: Number(m[1]), fingerprint: m[2] });
		}
		return result;
	}

	cleanup(): void {
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

/** A fresh Ed25519 public key line made in this process (no ssh-keygen): for tests that need many. */
export function ed25519Line(comment: string): string {
	const jwk = crypto.generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
	const field = (bytes: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
	const blob = Buffer.concat([field(Buffer.from("ssh-ed25519")), field(Buffer.from(jwk.x!, "base64url"))]);
	return `ssh-ed25519 ${blob.toString("base64")} ${comment}`;
}
