/**
 * Request metrics: every action keeps Moleculer's own, except the gateway's HTTP entry point,
 * which records one histogram observation per answered request, labelled with its status.
 */
import { EventEmitter } from "events";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { HTTP_REQUEST_TIME, RequestMetricsMiddleware } from "../../../middlewares/request-metrics.middleware";
import brokerConfig from "../../../moleculer.config";

const fakeResponse = (statusCode: number) => Object.assign(new EventEmitter(), { statusCode });

const gateway: ServiceSchema = {
	name: "api",
	actions: {
		rest(ctx: { params: { res: { statusCode: number }; fail?: boolean } }) {
			if (ctx.params.fail) throw Object.assign(new Error("refused"), { code: 422 });
			return true;
		},
	},
};
const labels: ServiceSchema = { name: "labels", actions: { list: () => [] } };

const broker = new ServiceBroker({
	logger: false,
	metrics: { enabled: true },
	internalMiddlewares: false,
	middlewares: ServiceBroker.INTERNAL_MIDDLEWARES.map(name => (name === "Metrics" ? RequestMetricsMiddleware() : name)),
});
broker.createService(gateway);
broker.createService(labels);
beforeAll(() => broker.start());
afterAll(() => broker.stop());

type Values = Array<{ labels: Record<string, unknown>; count?: number; value?: number }>;
const values = (name: string): Values => broker.metrics.getMetric(name)!.snapshot() ?? [];
const countOf = (name: string, match: Record<string, unknown>) =>
	values(name)
		.filter(v => Object.entries(match).every(([k, want]) => v.labels[k] === want))
		.reduce((sum, v) => sum + (v.count ?? v.value ?? 0), 0);

it("counts HTTP requests by the status they were answered with", async () => {
	await broker.call("api.rest", { res: fakeResponse(200) });
	await broker.call("api.rest", { res: fakeResponse(200) });
	await broker.call("api.rest", { res: fakeResponse(201) });
	expect(countOf(HTTP_REQUEST_TIME, { status: "200" })).toBe(2);
	expect(countOf(HTTP_REQUEST_TIME, { status: "201" })).toBe(1);
});

it("counts a failed request when its error answer is sent, with that answer's status", async () => {
	const res = fakeResponse(200);
	await expect(broker.call("api.rest", { res, fail: true })).rejects.toThrow("refused");
	expect(countOf(HTTP_REQUEST_TIME, { status: "400" })).toBe(0);
	res.statusCode = 400; // the gateway's error handler turns the 422 into GitLab's 400
	res.emit("close");
	expect(countOf(HTTP_REQUEST_TIME, { status: "400" })).toBe(1);
});

it("keeps Moleculer's request metrics for every other action, and none for the HTTP entry point", async () => {
	await broker.call("labels.list");
	await broker.call("labels.list");
	expect(countOf("moleculer.request.total", { action: "labels.list" })).toBe(2);
	expect(countOf("moleculer.request.total", { action: "api.rest" })).toBe(0);
	expect(countOf("moleculer.request.time", { action: "labels.list" })).toBe(2);
});

it("is how the service's broker is configured: Moleculer's internal middlewares in their order, this one in Metrics' place", () => {
	expect(brokerConfig.internalMiddlewares).toBe(false);
	const all = brokerConfig.middlewares ?? [];
	// Health's readiness is last (ready once every middleware has started), Moleculer's own just before it.
	expect((all[all.length - 1] as { name?: string }).name).toBe("HealthReadiness");
	const list = all.slice(0, -1);
	const internal = list.slice(list.length - ServiceBroker.INTERNAL_MIDDLEWARES.length);
	const metricsAt = ServiceBroker.INTERNAL_MIDDLEWARES.indexOf("Metrics");
	expect(internal.map((mw, i) => (i === metricsAt ? "Metrics" : mw))).toEqual(ServiceBroker.INTERNAL_MIDDLEWARES);
	expect(typeof internal[metricsAt]).toBe("function");
	expect(list.slice(0, list.length - internal.length).every(mw => typeof mw !== "string")).toBe(true);
});
