/** Zip archives of deflated entries, as zip tools usually write them (Python's zipfile, a real writer). */
import { runCommand } from "./commands";

const SCRIPT = [
	"import sys, io, json, zipfile",
	"out = io.BytesIO()",
	"with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:",
	"    for name, text in json.loads(sys.stdin.read()).items(): z.writestr(name, text)",
	"sys.stdout.buffer.write(out.getvalue())",
].join("\n");

export async function deflatedZip(files: Record<string, string>): Promise<Buffer> {
	const run = await runCommand("python3", ["-c", SCRIPT], { input: JSON.stringify(files) });
	if (run.status !== 0) throw new Error(`python3 zipfile: ${run.stderr}`);
	return run.stdoutBytes;
}
