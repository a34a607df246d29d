/**
 * Real volumes for storage faults: a tmpfs of a given size (a disk that fills up) that can be
 * remounted read-only, mounted on a fresh temporary directory. Mounting takes root with
 * CAP_SYS_ADMIN, as the build machines and CI give; elsewhere this throws the mount's own error.
 */
import { execFileSync } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";

export interface Volume {
	dir: string;
	/** Bytes still free. */
	free(): number;
	remount(mode: "ro" | "rw"): void;
	unmount(): void;
}

export function mountTmpfs(bytes: number, mode: "ro" | "rw" = "rw"): Volume {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-volume-"));
	execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755,${mode}`, "tmpfs", dir], { stdio: "pipe" });
	return {
		dir,
		free: () => {
			const s = fs.statfsSync(dir);
			return s.bavail * s.bsize;
		},
		remount: m => execFileSync("mount", ["-o", `remount,${m}`, dir], { stdio: "pipe" }),
		unmount: () => {
			execFileSync("umount", [dir], { stdio: "pipe" });
			fs.rmdirSync(dir);
		},
	};
}
