/**
 * SSH public-key parsing checked against the real thing: keys of every type are made by
 * `ssh-keygen` in a temporary directory, and every fingerprint (and every refusal) is compared
 * with what `ssh-keygen -l -E md5` says about the same text.
 */
import crypto from "crypto";
import {
	FINGERPRINT_TAKEN,
	MAX_KEY_LENGTH,
	md5Fingerprint,
	normalizeKeyText,
	parsePublicKey,
	SshKeyError,
	tryParsePublicKey,
	validateDeployKey,
} from "../../../../lib/deploy-keys/ssh-key";
import { KEYGEN_TYPES, KeyFactory, type GeneratedKey } from "../../../support/ssh-keys";
import { costRatio } from "../../../support/timing";

let factory: KeyFactory;
let keys: Record<string, GeneratedKey> = {};
const keygenFingerprints = (lines: string[]) => factory.fingerprints(lines);

/** SSH wire format helpers for crafting blobs. */
const wireString = (b: Buffer | string) => {
	const data = Buffer.isBuffer(b) ? b : Buffer.from(b, "latin1");
	const len = Buffer.alloc(4);
	len.writeUInt32BE(data.length);
	return Buffer.concat([len, data]);
};
const wireMpint = (magnitude: Buffer) => wireString(magnitude[0] & 0x80 ? Buffer.concat([Buffer.from([0]), magnitude]) : magnitude);

function rsaBlob(bits: number, trailing = Buffer.alloc(0)): Buffer {
	const jwk = crypto.generateKeyPairSync("rsa", { modulusLength: bits }).publicKey.export({ format: "jwk" });
	return Buffer.concat([wireString("ssh-rsa"), wireMpint(Buffer.from(jwk.e!, "base64url")), wireMpint(Buffer.from(jwk.n!, "base64url")), trailing]);
}

function ecdsaBlob(curve: string, opensslCurve: string, mutate?: (point: Buffer) => void, curveField = curve): Buffer {
	const ecdh = crypto.createECDH(opensslCurve);
	ecdh.generateKeys();
	const point = ecdh.getPublicKey();
	mutate?.(point);
	return Buffer.concat([wireString(`ecdsa-sha2-${curve}`), wireString(curveField), wireString(point)]);
}

const b64 = (blob: Buffer) => blob.toString("base64");
const bodyOf = (line: string) => line.split(" ")[1];

beforeAll(async () => {
	factory = new KeyFactory();
	keys = await factory.all();
});

afterAll(() => {
	factory.cleanup();
});

describe("parsePublicKey on keys made by ssh-keygen", () => {
	it.each(KEYGEN_TYPES.map(k => k.name))("%s: type, bits, comment and MD5 fingerprint match ssh-keygen", name => {
		const k = keys[name];
		const parsed = parsePublicKey(k.line);
		expect(parsed.type).toBe(k.type);
		expect(parsed.bits).toBe(k.bits);
		expect(parsed.comment).toBe(`${name}@test host`);
		expect(parsed.fingerprint).toBe(k.fingerprint);
		expect(parsed.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
	});

	it.each(KEYGEN_TYPES.map(k => k.name))("%s: accepted without a comment, with CR/LF and surrounding whitespace, and wrapped over lines", name => {
		const k = keys[name];
		const [type, body] = k.line.split(" ");
		expect(parsePublicKey(`${type} ${body}`).fingerprint).toBe(k.fingerprint);
		expect(parsePublicKey(`${type} ${body}`).comment).toBe("");
		expect(parsePublicKey(`  \t${k.line}\r\n\n`).fingerprint).toBe(k.fingerprint);
		expect(parsePublicKey(`${type}\t${body}`).fingerprint).toBe(k.fingerprint);
		// A key pasted with line breaks inside the body is joined again, as late GitLab 8 does.
		const wrapped = `${type} ${body.slice(0, 20)}\r\n${body.slice(20, 50)}\n${body.slice(50)} c`;
		expect(parsePublicKey(wrapped).fingerprint).toBe(k.fingerprint);
	});

	it("md5Fingerprint is the MD5 of the decoded blob in colon-separated hex pairs", () => {
		const blob = Buffer.from(bodyOf(keys.ed25519.line), "base64");
		const hex = crypto.createHash("md5").update(blob).digest("hex");
		expect(md5Fingerprint(blob)).toBe(hex.match(/../g)!.join(":"));
		expect(md5Fingerprint(blob)).toBe(keys.ed25519.fingerprint);
	});

	it("normalizeKeyText removes CR and LF anywhere and strips surrounding whitespace", () => {
		expect(normalizeKeyText(" \tssh-ed25519 AAAA\r\nBBBB c\r\n ")).toBe("ssh-ed25519 AAAABBBB c");
	});
});

describe("parsePublicKey refuses what ssh-keygen refuses", () => {
	const refused = (label: string, line: string) => {
		expect(() => parsePublicKey(line)).toThrow(SshKeyError);
		expect(tryParsePublicKey(line)).toBeNull();
		// ssh-keygen agrees that the line is no key.
		expect(keygenFingerprints([`${line} ${label}`]).size).toBe(0);
	};

	it("a body of another type under a type prefix", () => {
		refused("other-type-1", `ssh-rsa ${bodyOf(keys.ed25519.line)}`);
		refused("other-type-2", `ssh-ed25519 ${bodyOf(keys["rsa-2048"].line)}`);
		refused("other-type-3", `ecdsa-sha2-nistp384 ${bodyOf(keys["ecdsa-256"].line)}`);
		refused("other-type-4", `ssh-dss ${bodyOf(keys["rsa-2048"].line)}`);
	});

	it("an ECDSA key whose curve field names another curve, or whose point is off the curve", () => {
		refused("ec-curve", `ecdsa-sha2-nistp256 ${b64(ecdsaBlob("nistp256", "prime256v1", undefined, "nistp384"))}`);
		refused("ec-point", `ecdsa-sha2-nistp256 ${b64(ecdsaBlob("nistp256", "prime256v1", p => (p[7] ^= 1)))}`);
		refused("ec-compressed", `ecdsa-sha2-nistp384 ${b64(ecdsaBlob("nistp384", "secp384r1", p => (p[0] = 0x02)))}`);
	});

	it("truncated base64 and truncated blobs", () => {
		for (const k of Object.values(keys)) {
			const body = bodyOf(k.line);
			refused(`cut-odd-${k.name}`, `${k.type} ${body.slice(0, body.length - 7)}`);
			refused(`cut-four-${k.name}`, `${k.type} ${body.slice(0, body.length - 8)}`);
			refused(`cut-half-${k.name}`, `${k.type} ${body.slice(0, Math.floor(body.length / 8) * 4)}`);
		}
	});

	it("garbage, bytes after the key, an RSA modulus under 1024 bits and a short Ed25519 key", () => {
		refused("garbage-1", "ssh-rsa AAAA!!!!");
		refused("garbage-2", `ssh-rsa ${Buffer.from("hello world, not a key").toString("base64")}`);
		refused("garbage-3", "ssh-ed25519");
		refused("trailing", `ssh-rsa ${b64(rsaBlob(2048, wireString("x")))}`);
		refused("rsa-768", `ssh-rsa ${b64(rsaBlob(768))}`);
		refused("ed-short", `ssh-ed25519 ${b64(Buffer.concat([wireString("ssh-ed25519"), wireString(Buffer.alloc(31, 7))]))}`);
	});

	it("key types outside the supported set", () => {
		expect(() => parsePublicKey(`ssh-foo ${bodyOf(keys.ed25519.line)}`)).toThrow(/unsupported key type/);
		expect(tryParsePublicKey(`sk-ssh-ed25519@openssh.com ${bodyOf(keys.ed25519.line)}`)).toBeNull();
		expect(tryParsePublicKey(`from="10.0.0.1" ${keys.ed25519.line}`)).toBeNull();
	});

	it("base64 with stray characters that a lenient decoder would skip", () => {
		const body = bodyOf(keys.ed25519.line);
		expect(tryParsePublicKey(`ssh-ed25519 ${body.slice(0, 10)}*${body.slice(10)}`)).toBeNull();
		expect(tryParsePublicKey(`ssh-ed25519 ${body}==`)).toBeNull();
	});
});

describe("parsePublicKey agrees with ssh-keygen on crafted keys it accepts", () => {
	it("unpadded base64, a 1024-bit RSA key and ECDSA points made by OpenSSL", () => {
		const lines: Record<string, string> = {
			unpadded: `ssh-rsa ${b64(rsaBlob(2048)).replace(/=+$/, "")}`,
			"rsa-1024": `ssh-rsa ${b64(rsaBlob(1024))}`,
			p256: `ecdsa-sha2-nistp256 ${b64(ecdsaBlob("nistp256", "prime256v1"))}`,
			p521: `ecdsa-sha2-nistp521 ${b64(ecdsaBlob("nistp521", "secp521r1"))}`,
		};
		const expected = keygenFingerprints(Object.entries(lines).map(([label, line]) => `${line} ${label}`));
		expect(expected.size).toBe(Object.keys(lines).length);
		for (const [label, line] of Object.entries(lines)) {
			const parsed = parsePublicKey(line);
			expect([label, parsed.fingerprint, parsed.bits]).toEqual([label, expected.get(label)!.fingerprint, expected.get(label)!.bits]);
		}
	});

	it("never accepts a bit-flipped key that ssh-keygen refuses, and fingerprints alike when both accept", () => {
		const lines: string[] = [];
		for (const k of Object.values(keys)) {
			const blob = Buffer.from(bodyOf(k.line), "base64");
			// Every byte of the header, then a spread over the rest of the blob.
			const positions = new Set<number>();
			for (let i = 0; i < 40; i++) positions.add(i);
			for (let i = 40; i < blob.length; i += Math.max(1, Math.floor(blob.length / 25))) positions.add(i);
			positions.add(blob.length - 1);
			for (const pos of positions) {
				const mutated = Buffer.from(blob);
				mutated[pos] ^= pos % 2 ? 0x01 : 0x80;
				lines.push(`${k.type} ${b64(mutated)} ${k.name}-flip-${pos}`);
			}
		}
		const accepted = keygenFingerprints(lines);
		let agreedAccepts = 0;
		for (const line of lines) {
			const label = line.split(" ")[2];
			const ours = tryParsePublicKey(line);
			if (!ours) continue;
			expect([label, accepted.get(label)?.fingerprint]).toEqual([label, ours.fingerprint]);
			agreedAccepts++;
		}
		// Flips inside RSA moduli and Ed25519 keys stay valid keys: the comparison is not vacuous.
		expect(agreedAccepts).toBeGreaterThan(20);
	});
});

describe("validateDeployKey: GitLab 8 Key model messages", () => {
	it("a valid key: normalised text, title as given, fingerprint", () => {
		const k = keys["ecdsa-384"];
		const result = validateDeployKey({ title: "deploy", key: `\n  ${k.line}\r\n` });
		expect(result).toEqual({ ok: true, value: { title: "deploy", key: k.line, fingerprint: k.fingerprint, parsed: expect.any(Object) } });
	});

	it("missing title: blank, exactly as GitLab 8.16's deploy_keys_spec asserts", () => {
		expect(validateDeployKey({ key: keys.ed25519.line })).toEqual({ ok: false, errors: { title: ["can't be blank"] } });
		expect(validateDeployKey({ title: null, key: keys.ed25519.line })).toEqual({ ok: false, errors: { title: ["can't be blank"] } });
	});

	it("empty or whitespace title: blank only; title over 255 characters: too long", () => {
		expect(validateDeployKey({ title: "", key: keys.ed25519.line })).toEqual({ ok: false, errors: { title: ["can't be blank"] } });
		expect(validateDeployKey({ title: "   ", key: keys.ed25519.line })).toEqual({ ok: false, errors: { title: ["can't be blank"] } });
		expect(validateDeployKey({ title: "é".repeat(255), key: keys.ed25519.line }).ok).toBe(true);
		expect(validateDeployKey({ title: "x".repeat(256), key: keys.ed25519.line })).toEqual({
			ok: false,
			errors: { title: ["is too long (maximum is 255 characters)"] },
		});
	});

	it("missing key: the key array GitLab 8.16's deploy_keys_spec asserts, plus the fingerprint its Key model cannot generate", () => {
		expect(validateDeployKey({ title: "t" })).toEqual({
			ok: false,
			errors: {
				key: ["can't be blank", "is invalid"],
				fingerprint: ["cannot be generated"],
			},
		});
		expect(validateDeployKey({ title: "t", key: null })).toEqual(validateDeployKey({ title: "t" }));
	});

	it("both missing: every message at once", () => {
		const result = validateDeployKey({});
		expect(result.ok).toBe(false);
		expect(!result.ok && Object.keys(result.errors)).toEqual(["title", "key", "fingerprint"]);
	});

	it("empty and whitespace keys are blank and invalid", () => {
		for (const key of ["", "  \r\n "]) {
			expect(validateDeployKey({ title: "t", key })).toEqual({
				ok: false,
				errors: { key: ["can't be blank", "is invalid"], fingerprint: ["cannot be generated"] },
			});
		}
	});

	it("a key not starting with ssh- or ecdsa- is invalid and has no fingerprint", () => {
		for (const key of ["hello", `from="x" ${keys.ed25519.line}`, "AAAAC3NzaC1lZDI1NTE5AAAAIA==", "-----BEGIN PUBLIC KEY-----"]) {
			expect(validateDeployKey({ title: "t", key })).toEqual({ ok: false, errors: { key: ["is invalid"], fingerprint: ["cannot be generated"] } });
		}
	});

	it("a well-prefixed key that does not parse: only the fingerprint error", () => {
		for (const key of [`ssh-rsa ${bodyOf(keys.ed25519.line)}`, "ssh-rsa AAAAB3NzaC1yc2E", `ssh-foo ${bodyOf(keys.ed25519.line)}`, "ecdsa-nonsense"]) {
			expect(validateDeployKey({ title: "t", key })).toEqual({ ok: false, errors: { fingerprint: ["cannot be generated"] } });
		}
	});

	it("a huge key is too long (and refused without a fingerprint when it does not parse)", () => {
		const huge = `ssh-rsa ${"A".repeat(MAX_KEY_LENGTH)}`;
		expect(validateDeployKey({ title: "t", key: huge })).toEqual({
			ok: false,
			errors: { key: ["is too long (maximum is 5000 characters)"], fingerprint: ["cannot be generated"] },
		});
		const megabyte = `ssh-ed25519 ${"A".repeat(1024 * 1024)}`;
		expect(validateDeployKey({ title: "t", key: megabyte })).toEqual({
			ok: false,
			errors: { key: ["is too long (maximum is 5000 characters)"], fingerprint: ["cannot be generated"] },
		});
		// A real key with a comment that pushes it over the limit is still too long.
		const longComment = `${keys.ed25519.line} ${"c".repeat(MAX_KEY_LENGTH)}`;
		expect(validateDeployKey({ title: "t", key: longComment })).toEqual({
			ok: false,
			errors: { key: ["is too long (maximum is 5000 characters)"] },
		});
	});

	it("values that are not text: numbers become text, arrays and objects are invalid", () => {
		expect(validateDeployKey({ title: 42, key: keys.ed25519.line })).toMatchObject({ ok: true, value: { title: "42" } });
		expect(validateDeployKey({ title: ["a"], key: { k: 1 } })).toEqual({
			ok: false,
			errors: { title: ["is invalid"], key: ["is invalid"], fingerprint: ["cannot be generated"] },
		});
	});

	it("the uniqueness error names the fingerprint", () => {
		expect(FINGERPRINT_TAKEN).toEqual({ fingerprint: ["has already been taken"] });
	});
});

describe("validateDeployKey costs time in proportion to the key, whatever it holds (any user may add a key)", () => {
	it("a run of spaces before a line separator costs what a key of the same length does", () => {
		const n = 20_000;
		// `.` stops at U+2028: the comment pattern used to try every split of the spaces (quadratic).
		const hostile = "ssh-ed25519 AAAA" + " ".repeat(n) + "\u2028x";
		const ordinary = "ssh-ed25519 AAAA " + "x".repeat(n - 1) + "\u2028x";
		for (const key of [hostile, ordinary])
			expect(validateDeployKey({ title: "t", key })).toMatchObject({ ok: false, errors: { fingerprint: ["cannot be generated"] } });
		const ratio = costRatio(
			() => validateDeployKey({ title: "t", key: hostile }),
			() => validateDeployKey({ title: "t", key: ordinary }),
		);
		// The old pattern took thousands of times as long here.
		expect(ratio).toBeLessThan(10);
	});
});
