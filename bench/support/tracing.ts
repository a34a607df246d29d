/**
 * What tracing costs (docs/operations.md#what-tracing-costs): a deployment of the bench with its
 * spans exported over OTLP/HTTP to a real collector (Jaeger v2, test/support/jaeger.ts) at a
 * sampling ratio, to be measured in turns with the same deployment without tracing.
 */
import type { BenchContext, Goal } from "../scenario";
import { Jaeger } from "../../test/support/jaeger";
import { deploymentCost, type CpuSample } from "../../test/support/cpu";

export interface TracedCase {
	/** How the case's name ends: ", tracing on, 1 % sampled". */
	label: string;
	ratio: number;
	/** The goal on the cost against tracing off (none at 100 %): on throughput and on CPU per request or event. */
	goal?: Goal;
}

export const TRACED_CASES: TracedCase[] = [
	{ label: "tracing on, 100 % sampled", ratio: 1 },
	{ label: "tracing on, 1 % sampled", ratio: 0.01, goal: { max: 1.05 } },
];

/** The collector, stopped after the scenario; it keeps the last 20,000 traces (its memory stays bounded under load). */
export async function startCollector(ctx: BenchContext): Promise<Jaeger> {
	const jaeger = await Jaeger.start({ maxTraces: 20_000 });
	ctx.defer(() => jaeger.stop());
	return jaeger;
}

/** A deployment's environment with tracing on: every trace started at the gateway, sampled at `ratio`, whole. */
export function tracingEnv(jaeger: Jaeger, ratio: number): Record<string, string> {
	return { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: String(ratio) };
}

/**
 * CPU ms the deployment spent on each of `count` requests or events: every process of it (NATS and
 * Redis too), not the load generator, the peers nor the collector (in production it runs elsewhere).
 * Unlike a rate, it moves little with the machine's speed or its neighbours.
 */
export function cpuMsPer(sample: CpuSample, count: number): number {
	return deploymentCost(sample, ["loadGenerator", "peers", "jaeger"]).cpuMs / count;
}
