/**
 * DATA_DIR as the embedded store needs it: a directory this process can create files in and
 * sync. Checked before anything else writes there (the secrets key, mixins/secrets.mixin.ts; the
 * store, ./store.ts), so that a bad DATA_DIR is reported by the store, once, in one line naming
 * it and what to do (docs/operations.md#start-up-faults).
 */
import fs from "fs";
import path from "path";

/**
 * A fault of the store's files or directory, said in one line for an operator: what is wrong,
 * which file, how to recover. Its stack is that line alone (the frames would only hide it).
 */
export class StoreStartError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "StoreStartError";
		this.stack = `${this.name}: ${message}`;
	}
}

/** What an errno says, for an operator. */
const REASONS: Record<string, string> = {
	EACCES: "this process may not write there",
	EPERM: "this process may not write there",
	EROFS: "it is on a read-only file system",
	ENOSPC: "its disk is full",
	EDQUOT: "its disk quota is used up",
	ENOTDIR: "a file stands where a directory should be",
	EEXIST: "a file stands where a directory should be",
	EIO: "its disk fails to read or write",
};

function dataDirFault(dataDir: string, what: string, err: unknown): StoreStartError {
	const e = err as NodeJS.ErrnoException;
	const code = e.code ?? e.message;
	const reason = REASONS[e.code ?? ""];
	return new StoreStartError(
		`DATA_DIR=${dataDir} ${what} (${code}${reason ? `: ${reason}` : ""}): the embedded store and the secrets key are kept there; ` +
			`point DATA_DIR at a writable directory with free space, or fix this one (docs/operations.md#start-up-faults)`,
	);
}

/** Why a directory could not be made: a recursive mkdir says ENOENT where its nearest parent is read-only. */
function whyNotMade(dataDir: string, err: unknown): unknown {
	if ((err as NodeJS.ErrnoException).code !== "ENOENT") return err;
	let parent = path.dirname(dataDir);
	while (!fs.existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
	try {
		fs.accessSync(parent, fs.constants.W_OK);
		return err;
	} catch (denied) {
		return denied;
	}
}

/** The probe file's name: per process, so that processes starting together do not meet. */
const probeName = () => `.write-probe-${process.pid}-${Math.random().toString(36).slice(2)}`;

/**
 * Makes DATA_DIR if missing and proves a file can be created, written, synced and removed there
 * (a read-only mount, missing permission and a full disk each fail one of those). Throws
 * StoreStartError naming DATA_DIR.
 */
export function prepareDataDir(dataDir: string): void {
	let found: fs.Stats | undefined;
	try {
		found = fs.statSync(dataDir, { throwIfNoEntry: false });
	} catch (err) {
		// A file on its path (ENOTDIR), a parent this process may not search (EACCES).
		throw dataDirFault(dataDir, "cannot be created", err);
	}
	if (found && !found.isDirectory()) throw dataDirFault(dataDir, "is a file, not a directory", { code: "ENOTDIR" });
	try {
		fs.mkdirSync(dataDir, { recursive: true });
	} catch (err) {
		throw dataDirFault(dataDir, "cannot be created", whyNotMade(dataDir, err));
	}
	const probe = path.join(dataDir, probeName());
	try {
		const fd = fs.openSync(probe, "wx", 0o600);
		try {
			fs.writeSync(fd, "probe");
			fs.fsyncSync(fd);
		} finally {
			fs.closeSync(fd);
		}
	} catch (err) {
		fs.rmSync(probe, { force: true });
		throw dataDirFault(dataDir, "is not writable", err);
	}
	fs.rmSync(probe, { force: true });
}
