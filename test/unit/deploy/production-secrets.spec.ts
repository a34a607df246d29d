/**
 * The production overlay's secrets, as an operator meets them: before secrets.env exists the
 * render fails saying what to do, and a secrets.env left with an empty SECRETS_KEY renders but no
 * pod starts, each saying which variable is wrong.
 */
import { execFileSync, spawnSync } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import { loadConfig } from "../../../config";
import { RUNNER, SERVICE_DIR, BROKER_CONFIG } from "../../support/processes";
import {
	K8S_DIR,
	TEST_PRODUCTION_SECRETS,
	appContainer,
	containerEnv,
	literalEnv,
	ofKind,
	renderOverlay,
	runtimeImage,
	type K8sObject,
} from "../../support/deploy-manifests";

const image = runtimeImage();
const appDeployments = (objects: K8sObject[]) => ofKind(objects, "Deployment").filter(d => literalEnv(appContainer(d), "SERVICES") !== undefined);
const podEnv = (objects: K8sObject[], d: K8sObject) =>
	containerEnv(objects, appContainer(d), { podName: `${d.metadata.name}-7d4b9c-x2x9q`, imageEnv: image.env });

it("without secrets.env, `kubectl kustomize` stops with what to do: copy secrets.env.example to secrets.env and fill it in", () => {
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-k8s-nosecrets-"));
	try {
		fs.cpSync(K8S_DIR, path.join(copy, "k8s"), { recursive: true });
		const dir = path.join(copy, "k8s/overlays/production");
		fs.rmSync(path.join(dir, "secrets.env"), { force: true });
		let stderr = "";
		try {
			execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
		} catch (err: any) {
			if (err.code === "ENOENT") throw new Error("kubectl is not installed: install Debian's kubectl package", { cause: err });
			stderr = String(err.stderr);
		}
		expect(stderr).toContain("secrets.env-is-missing:copy-secrets.env.example-to-secrets.env-and-fill-it-in");
		expect(stderr).toContain(path.join(dir, "secrets.env"));
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
});

describe("a secrets.env whose SECRETS_KEY is left empty", () => {
	const rendered = renderOverlay("production", { ...TEST_PRODUCTION_SECRETS, SECRETS_KEY: "" });

	it("renders, and config/ refuses every pod's environment, naming SECRETS_KEY", () => {
		const deployments = appDeployments(rendered);
		expect(deployments.length).toBeGreaterThanOrEqual(11);
		for (const d of deployments)
			expect(() => loadConfig(podEnv(rendered, d))).toThrow(
				'Invalid configuration: SECRETS_KEY="" (expected a key shared by every node whenever TRANSPORTER is set)',
			);
	});

	it("a pod's process exits at once with that message instead of serving", () => {
		const labels = appDeployments(rendered).find(d => d.metadata.name === "labels")!;
		// The image's command, run here on the compiled dist/ (see test/support/manifest-cluster.ts for the full mapping).
		const res = spawnSync(process.execPath, [RUNNER, "--config", BROKER_CONFIG], {
			env: { ...podEnv(rendered, labels), SERVICEDIR: SERVICE_DIR, PATH: process.env.PATH ?? "" },
			encoding: "utf8",
			timeout: 30000,
		});
		expect(res.status).not.toBe(0);
		expect(res.status).not.toBeNull();
		const expected = 'Invalid configuration: SECRETS_KEY="" (expected a key shared by every node whenever TRANSPORTER is set)';
		expect(`${res.stdout}${res.stderr}`).toContain(expected);
	});
});
