/**
 * The request's span on the real gateway (docs/operations.md#traces): every request is named once
 * (gateway/server/request-id.ts) and traced once where it enters (gateway/server/http-server.ts), whichever way
 * it is answered: moleculer-web's way (the action's span its child), the fast path of a cached GET
 * (no context, no action), v4 beside v3, a refusal. The span's correlation id is the answer's
 * X-Request-ID. Spans are read from the SDK (test/support/span-collector.ts).
 */
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { Service } from "moleculer";
import { loadConfig } from "../../../config";
import { startTelemetry, stopTelemetry } from "../../../lib/tracing/telemetry";
import { TracingMiddleware } from "../../../middlewares/tracing.middleware";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import { client, type Reply } from "../../support/http";
import { parentIdOf, SpanCollector } from "../../support/span-collector";

const cfg = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
const collector = new SpanCollector();
let stack: LocalStack;
let gateway: Service & { httpHandler(...args: unknown[]): unknown };
let owner: TestUser;
let labels: string;

/** The spans of one answered request: the trace its gateway span (named by the answer's X-Request-ID) roots. */
async function traceOf(answer: Reply): Promise<{ root: ReadableSpan; children: ReadableSpan[] }> {
	const spans = await collector.take();
	const roots = spans.filter(s => s.kind === SpanKind.SERVER && !parentIdOf(s));
	expect(roots.map(s => s.attributes.correlation_id)).toEqual([answer.headers.get("x-request-id")]);
	const [root] = roots;
	const children = spans.filter(s => s.spanContext().traceId === root.spanContext().traceId && s !== root);
	return { root, children };
}

/** The request `run` makes, and whether it went moleculer-web's way. */
async function viaGateway(run: () => Promise<Reply>): Promise<{ answer: Reply; usual: boolean }> {
	const spy = jest.spyOn(gateway, "httpHandler");
	try {
		const answer = await run();
		return { answer, usual: spy.mock.calls.length > 0 };
	} finally {
		spy.mockRestore();
	}
}

beforeAll(async () => {
	startTelemetry(cfg.tracing, { services: [], nodeID: "test" }, collector);
	stack = await startLocal([ApiService, AccountsService, LabelsService], {
		cacher: { type: "MemoryLRU", options: { max: 1000 } },
		middlewares: [TracingMiddleware(cfg)],
	});
	gateway = stack.broker.getLocalService("api") as typeof gateway;
	owner = await createUser(stack.api());
	const project = await createProject(client(stack.url, owner.token));
	labels = `/projects/${project.id}/labels`;
	expect((await client(stack.url, owner.token).post(labels, { body: { name: "bug", color: "#428bca" } })).status).toBe(200);
	await collector.take();
});
afterAll(async () => {
	await stack?.stop();
	await stopTelemetry();
});

it("traces a request moleculer-web routes, and the one the fast path answers from the cache, once each", async () => {
	const as = client(stack.url, owner.token);
	const first = await viaGateway(() => as.get(labels, { headers: { "X-Request-ID": "usual-1" } }));
	expect([first.answer.status, first.usual, first.answer.headers.get("x-request-id")]).toEqual([200, true, "usual-1"]);
	const usual = await traceOf(first.answer);
	expect([usual.root.name, usual.root.attributes["http.response.status_code"], usual.root.attributes["gitlab.project.id"]]).toEqual([
		"GET /api/v3/projects/:id/labels",
		200,
		expect.any(String),
	]);
	expect(usual.children.map(s => [s.name, parentIdOf(s), s.attributes.correlation_id])).toContainEqual([
		"labels.list",
		usual.root.spanContext().spanId,
		"usual-1",
	]);

	const again = await viaGateway(() => as.get(labels, { headers: { "X-Request-ID": "fast-1" } }));
	expect([again.answer.status, again.usual, again.answer.headers.get("x-request-id")]).toEqual([200, false, "fast-1"]);
	const fast = await traceOf(again.answer);
	expect([fast.root.name, fast.root.attributes["http.response.status_code"], fast.children]).toEqual(["GET /api/v3/projects/:id/labels", 200, []]);
});

it("names by a new id a request whose own id is not a sane one, and traces v4 and a refusal alike", async () => {
	const spaced = await client(stack.url, owner.token).get(labels, { headers: { "X-Request-ID": "two words" } });
	expect(spaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
	expect((await traceOf(spaced)).root.attributes.correlation_id).toBe(spaced.headers.get("x-request-id"));

	const v4 = await client(stack.v4Url, owner.token).get(labels, { headers: { "X-Correlation-ID": "v4-1" } });
	expect([v4.status, v4.headers.get("x-request-id")]).toEqual([200, "v4-1"]);
	expect((await traceOf(v4)).root.name).toBe("GET /api/v4/projects/:id/labels");

	const refused = await client(stack.url).get(labels, { headers: { "X-Request-ID": "refused-1" } });
	expect([refused.status, refused.headers.get("x-request-id")]).toEqual([401, "refused-1"]);
	const { root } = await traceOf(refused);
	expect([root.name, root.attributes["http.response.status_code"]]).toEqual(["GET /api/v3/projects/:id/labels", 401]);
});
