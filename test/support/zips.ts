/** Zip archives of deflated entries, as zip tools usually write them (Python's zipfile, a real writer). */
import { spawnSync } from "child_process";

const SCRIPT = [
	"import sys, io, json, zipfile",
	"out = io.BytesIO()",
	"with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:",
	"    for name, text in json.loads(sys.stdin.read()).items(): z.writestr(name, text)",
	"sys.stdout.buffer.write(out.getvalue())",
].join("\n");

export function deflatedZip(files: Record<string, string>): Buffer {
	const run = spawnSync("python3", ["-c", SCRIPT], { input: JSON.stringify(files), maxBuffer: 64 * 1024 * 1024 });
	if (run.status !== 0) throw new Error(`python3 zipfile: ${String(run.stderr)}`);
	return run.stdout;
}
