/** root's generated credentials: in a file of their own, mode 0600, never in a log line (lib/accounts/root-credentials.ts). */
import { execFileSync } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import { createdRootFromLog, createdRootLine, exportTokenLine, ROOT_CREDENTIALS_FILE, stageRootCredentials } from "../../../../lib/accounts/root-credentials";

const PASSWORD = "Pw-generated-0123456789";
const TOKEN = "AbCdEfGhIjKlMnOpQrSt";
let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-root-credentials-"))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

it("writes what was generated to a file only its user reads, in place once committed, and a shell line reads the token back", () => {
	const staged = stageRootCredentials(dir, { password: PASSWORD, token: TOKEN });
	const file = path.join(dir, ROOT_CREDENTIALS_FILE);
	expect(staged.root).toEqual({ file, generatedPassword: true, generatedToken: true });
	// Before root is stored: on disk already, under this process's name.
	expect(fs.readdirSync(dir)).toEqual([`${ROOT_CREDENTIALS_FILE}.${process.pid}`]);
	staged.commit();
	expect(fs.readdirSync(dir)).toEqual([ROOT_CREDENTIALS_FILE]);
	expect(fs.statSync(file).mode & 0o777).toBe(0o600);
	const text = fs.readFileSync(file, "utf8");
	expect(text).toContain(`\nLogin: root\nPassword: ${PASSWORD}\nPrivate token: ${TOKEN}\n`);
	// The banner's line, run by a shell in the data directory's parent as a user would paste it.
	const line = exportTokenLine(staged.root, path.dirname(dir));
	expect(line).toBe(`export T=$(sed -n 's/^Private token: //p' ${path.basename(dir)}/${ROOT_CREDENTIALS_FILE})`);
	expect(execFileSync("sh", ["-c", `${line}; printf %s "$T"`], { cwd: path.dirname(dir), encoding: "utf8" })).toBe(TOKEN);
});

it("writes only the generated one, nothing when both were chosen, and nothing is left when another start stored root first", () => {
	const tokenChosen = stageRootCredentials(dir, { password: PASSWORD, token: null });
	tokenChosen.commit();
	const text = fs.readFileSync(path.join(dir, ROOT_CREDENTIALS_FILE), "utf8");
	expect([text.includes(PASSWORD), text.includes("Private token")]).toEqual([true, false]);
	expect(exportTokenLine(tokenChosen.root)).toBe("export T=$GITLAB_ROOT_TOKEN");
	fs.rmSync(path.join(dir, ROOT_CREDENTIALS_FILE));

	const chosen = stageRootCredentials(dir, { password: null, token: null });
	expect(chosen.root).toEqual({ file: null, generatedPassword: false, generatedToken: false });
	chosen.commit();
	expect(fs.readdirSync(dir)).toEqual([]);

	stageRootCredentials(dir, { password: PASSWORD, token: TOKEN }).discard();
	expect(fs.readdirSync(dir)).toEqual([]);
});

it("says where the file is in the log line, no secret, and a launcher reads the same facts back from it", () => {
	for (const generated of [
		{ password: PASSWORD, token: TOKEN },
		{ password: PASSWORD, token: null },
		{ password: null, token: TOKEN },
		{ password: null, token: null },
	]) {
		const { root } = stageRootCredentials(dir, generated);
		const line = createdRootLine(root);
		expect([line.includes(PASSWORD), line.includes(TOKEN)]).toEqual([false, false]);
		expect(createdRootFromLog(`[2026-12-02] INFO accounts/ACCOUNTS: ${line}\nnext line`)).toEqual(root);
		fs.rmSync(dir, { recursive: true, force: true });
	}
	expect(createdRootFromLog("nothing of the kind")).toBeNull();
});

it("stops the start with what to do when the data directory cannot take the file", () => {
	const blocked = path.join(dir, "not-a-directory");
	fs.writeFileSync(blocked, "");
	expect(() => stageRootCredentials(blocked, { password: PASSWORD, token: TOKEN })).toThrow(
		/^Cannot write root's generated credentials to .*: make DATA_DIR writable, or set GITLAB_ROOT_PASSWORD and GITLAB_ROOT_TOKEN for the first start\.$/,
	);
});
