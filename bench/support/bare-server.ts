/**
 * The physical floor for HTTP benchmarks: a bare Node `http` server in its own process that answers
 * every request with the same bytes and headers as the endpoint under test. Run as a script by
 * `startBareServer` (`node bare-server.js <port> <body file> <headers JSON>`), ready once it answers 200.
 */
import fs from "fs";
import http from "http";
import path from "path";
import { answers200, freePort, startProcess, type ManagedProcess } from "../../test/support/processes";

export interface BareServer {
	url: string;
	proc: ManagedProcess;
}

export async function startBareServer(body: Buffer, headers: Record<string, string>, tmpDir: string, pollMs?: number): Promise<BareServer> {
	const port = await freePort();
	const bodyFile = path.join(tmpDir, `bare-body-${port}`);
	fs.writeFileSync(bodyFile, body);
	const url = `http://127.0.0.1:${port}/`;
	const proc = await startProcess({
		name: "bare-http",
		args: [__filename, String(port), bodyFile, JSON.stringify(headers)],
		env: {},
		ready: () => answers200(url),
		pollMs,
	});
	return { url, proc };
}

function serve([port, bodyFile, headersJson]: string[]): void {
	const body = fs.readFileSync(bodyFile);
	const headers = { ...JSON.parse(headersJson), "Content-Length": String(body.length) };
	http.createServer((req, res) => {
		req.resume();
		req.on("end", () => {
			res.writeHead(200, headers);
			res.end(body);
		});
	}).listen(Number(port), "127.0.0.1");
}

if (require.main === module) serve(process.argv.slice(2));
