/**
 * The Dockerfile, read as Docker reads it (no engine runs here to build it): multi-stage on
 * node:24-alpine (Node 24 LTS, the major `engines` names), compiled JavaScript and production
 * dependencies only in the final image, a non-root user, moleculer-runner as PID 1; and the
 * layout its CMD expects matches the build.
 */
import { spawnSync } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import { ROOT, dockerContextFiles, readDockerfile, runtimeImage, serviceFiles } from "../../support/deploy-manifests";

const stages = readDockerfile();
const runtime = runtimeImage(stages);
const ops = (stage = runtime.stage, op: string) => stage.instructions.filter(i => i.op === op).map(i => i.args);

describe("Dockerfile", () => {
	it("is multi-stage, every stage on node:24-alpine: the major package.json's engines asks for", () => {
		expect(stages.length).toBeGreaterThanOrEqual(2);
		for (const s of stages) expect(s.from).toBe("node:24-alpine");
		const engines = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).engines;
		expect(engines).toEqual({ node: ">=24" });
		// The type definitions describe the same major as the runtime.
		const typesNode = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies["@types/node"];
		expect(typesNode).toMatch(/^24\.\d+\.\d+$/);
		// .nvmrc names a release of it: what nvm installs and what npm start and npm test fetch (scripts/local.sh).
		expect(fs.readFileSync(path.join(ROOT, ".nvmrc"), "utf8")).toMatch(/^24\.\d+\.\d+\n$/);
		// And the tests run on it (npm test fetches it when the machine's node is older).
		expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(24);
	});

	it("final image: only compiled dist/, production node_modules and package.json; no sources", () => {
		const copies = ops(runtime.stage, "COPY");
		expect(copies).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^--from=deps \S*node_modules \.\/node_modules$/),
				expect.stringMatching(/^--from=build \S+\/dist \.\/$/),
			]),
		);
		for (const c of copies) expect(c).toMatch(/^(--from=(deps|build) |package\.json )/);
		const deps = stages.find(s => s.name === "deps")!;
		expect(ops(deps, "RUN").join(" ")).toMatch(/npm ci --omit=dev/);
		const build = stages.find(s => s.name === "build")!;
		const buildRun = ops(build, "RUN").join(" ");
		expect(buildRun).toMatch(/npm run build/);
		// Source maps and the incremental build info are not "compiled JavaScript".
		expect(buildRun).toMatch(/find dist -name '\*\.map' -delete/);
		expect(buildRun).toMatch(/dist\/\.tsbuildinfo/);
	});

	it("the build stage's dist is where tsc writes (tsconfig outDir, resolved from the build WORKDIR)", () => {
		const build = stages.find(s => s.name === "build")!;
		const workdir = ops(build, "WORKDIR").pop()!;
		const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, "tsconfig.json"), "utf8"));
		const copied = /--from=build (\S+) /.exec(ops(runtime.stage, "COPY").find(c => c.startsWith("--from=build"))!)![1];
		expect(copied).toBe(path.posix.join(workdir, tsconfig.compilerOptions.outDir));
		const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts;
		expect(scripts.build).toBe("tsc -p tsconfig.build.json");
	});

	it("runs as a non-root user, given numerically so Kubernetes can verify runAsNonRoot", () => {
		expect(runtime.user).toMatch(/^\d+(:\d+)?$/);
		expect(Number(runtime.user!.split(":")[0])).toBeGreaterThan(0);
	});

	it("starts moleculer-runner as PID 1 (exec form, no shell, no npm) with the compiled config", () => {
		expect(runtime.entrypoint).toEqual([]);
		expect(runtime.cmd).toEqual(["node", "node_modules/moleculer/bin/moleculer-runner.js", "--config", "moleculer.config.js"]);
		expect(runtime.workdir).toBe("/app");
		expect(runtime.env).toMatchObject({ NODE_ENV: "production", SERVICEDIR: "services" });
		// What the CMD names exists where the image puts it: node_modules/ and dist/ land in /app.
		expect(fs.existsSync(path.join(ROOT, "node_modules/moleculer/bin/moleculer-runner.js"))).toBe(true);
		expect(fs.existsSync(path.join(ROOT, "moleculer.config.ts"))).toBe(true);
		expect(fs.existsSync(path.join(ROOT, "services"))).toBe(true);
	});

	it("prepares DATA_DIR for the app user and exposes the three ports", () => {
		const run = ops(runtime.stage, "RUN").join(" ");
		expect(run).toContain(`mkdir -p ${runtime.env.DATA_DIR}/artifacts`);
		expect(run).toMatch(new RegExp(`chown -R ${runtime.user} ${runtime.env.DATA_DIR}`));
		expect(runtime.exposed.sort()).toEqual([3000, 3001, 3030]);
	});
});

describe("the build stage, from the build context .dockerignore leaves", () => {
	let dir: string;
	afterAll(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

	it("compiles with `npm run build` into the layout the runtime CMD and SERVICEDIR expect", () => {
		dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-docker-context-"));
		for (const file of dockerContextFiles()) {
			fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
			fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
		}
		// `npm ci` in the image installs what the lockfile pins; the work tree's install stands in.
		fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
		const build = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).scripts.build as string;
		const [tool, ...args] = build.split(" ");
		expect(tool).toBe("tsc");
		const res = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), ...args], { cwd: dir, encoding: "utf8" });
		expect(`${res.stdout}${res.stderr}`.trim()).toBe("");
		expect(res.status).toBe(0);
		const app = path.join(dir, "dist");
		expect(fs.existsSync(path.join(app, runtime.cmd[runtime.cmd.indexOf("--config") + 1]))).toBe(true);
		for (const s of serviceFiles()) expect([s, fs.existsSync(path.join(app, runtime.env.SERVICEDIR, `${s}.service.js`))]).toEqual([s, true]);
	}, 180000);
});

describe(".dockerignore", () => {
	const ignored = fs
		.readFileSync(path.join(ROOT, ".dockerignore"), "utf8")
		.split("\n")
		.map(l => l.trim())
		.filter(l => l && !l.startsWith("#"));

	it("keeps local builds, dependencies, tests, VCS data and secrets out of the build context", () => {
		expect(ignored).toEqual(expect.arrayContaining(["node_modules", "dist", ".git", "test", "data", "**/secrets.env", ".env"]));
	});

	it("keeps what the build needs", () => {
		for (const needed of [
			"package.json",
			"package-lock.json",
			"tsconfig.json",
			"tsconfig.build.json",
			"config",
			"services",
			"lib",
			"mixins",
			"moleculer.config.ts",
		])
			expect(ignored).not.toContain(needed);
	});
});
