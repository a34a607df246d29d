/**
 * How the internal API's shared secret stands at start-up, on the all-in-one process as `npm start`
 * runs it: off without INTERNAL_API_SECRET (said once in the log), and a secret shorter than 32
 * characters still starts, with a warning naming the command that makes a long one, and is guarded
 * by the per-address limit on wrong secrets, the right one included (a long one never is: see
 * edge-attacks.spec.ts). docs/api.md#internal
 */
import fs from "fs";
import http from "http";
import os from "os";
import path from "path";
import { INTERNAL_SECRET_COMMAND } from "../../../config";
import { freePort, startServiceProcess, stopProcess, type ServiceProcess } from "../../support/processes";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-internal-secret-"));
const AUTH_FAILURES = 3;
let port = 0;

async function startAllInOne(extra: Record<string, string>): Promise<ServiceProcess> {
	port = await freePort();
	return startServiceProcess({
		name: "all-in-one",
		services: "",
		env: {
			PATH: process.env.PATH ?? "",
			DATA_DIR: dataDir,
			PORT: String(port),
			HEALTH_PORT: String(await freePort()),
			METRICS_PORT: String(await freePort()),
			LOG_LEVEL: "info",
			LOG_FORMAT: "text",
			AUTH_FAILURE_LIMIT: String(AUTH_FAILURES),
			...extra,
		},
	});
}

/** GET /api/v3/internal/dead-letters from `localAddress` with `secret`: the status. */
function internalGet(localAddress: string, secret: string): Promise<number> {
	return new Promise((resolve, reject) => {
		const req = http.get(
			{ host: "127.0.0.1", port, localAddress, path: "/api/v3/internal/dead-letters", headers: { "Gitlab-Shared-Secret": secret } },
			res => {
				res.resume();
				res.on("end", () => resolve(res.statusCode!));
			},
		);
		req.on("error", reject);
	});
}

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it("says at start-up that the internal API is off without INTERNAL_API_SECRET, and answers it 404", async () => {
	const proc = await startAllInOne({});
	try {
		expect(proc.output.join("")).toContain("The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.");
		expect(await internalGet("127.0.0.1", "anything")).toBe(404);
	} finally {
		expect(await stopProcess(proc, "SIGTERM")).toBe(0);
	}
});

it("starts with a short secret, warns with the command that makes a long one, and refuses a guessing address even the right secret", async () => {
	const secret = "short-secret";
	const proc = await startAllInOne({ INTERNAL_API_SECRET: secret });
	try {
		const log = proc.output.join("");
		expect(log).toContain(`INTERNAL_API_SECRET is shorter than 32 characters`);
		expect(log).toContain(`Generate a longer one with ${INTERNAL_SECRET_COMMAND}`);
		expect(log).not.toContain(secret);
		const guesser = "127.0.0.21";
		const statuses: number[] = [];
		for (let i = 0; i < AUTH_FAILURES + 1; i++) statuses.push(await internalGet(guesser, `guess-${i}`));
		expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429]);
		// Only the limit stands between a short secret and a guesser: the guessing address is refused, right or wrong.
		expect(await internalGet(guesser, secret)).toBe(429);
		expect(await internalGet("127.0.0.22", secret)).toBe(200);
	} finally {
		expect(await stopProcess(proc, "SIGTERM")).toBe(0);
	}
});
