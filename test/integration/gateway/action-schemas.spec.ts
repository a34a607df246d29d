/**
 * Actions' declarations as another node sees them: whole, even where the service shares one
 * schema object between fields or actions (Moleculer's registry drops repeated objects).
 */
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { ActionSchemasMiddleware, copyPlain } from "../../../middlewares/action-schemas.middleware";

const page = { type: "number", integer: true, convert: true, optional: true };
const states = ["a", "b"];
const scope = {
	type: "multi",
	rules: [
		{ type: "enum", values: states },
		{ type: "array", items: { type: "enum", values: states } },
	],
};
/** A fresh schema each time: the middleware replaces the actions it copies. */
const service = (): ServiceSchema => {
	const shared = { page, per_page: page, scope };
	return {
		name: "things",
		actions: {
			list: { params: { ...shared }, cache: { keys: ["page"] }, handler: () => [] },
			mine: { params: { ...shared }, handler: () => [] },
		},
	};
};
const whole = { page, per_page: page, scope };

async function remoteView(withMiddleware: boolean) {
	const namespace = `schemas-${process.pid}-${withMiddleware}`;
	const owner = new ServiceBroker({
		nodeID: "owner",
		namespace,
		transporter: "Fake",
		logger: false,
		middlewares: withMiddleware ? [ActionSchemasMiddleware()] : [],
	});
	const viewer = new ServiceBroker({ nodeID: "viewer", namespace, transporter: "Fake", logger: false });
	owner.createService(service());
	await Promise.all([owner.start(), viewer.start()]);
	try {
		await viewer.waitForServices("things", 5000);
		const actions = viewer.registry.getActionList({ onlyAvailable: true, skipInternal: true }) as { name: string; action: { params?: object } }[];
		return Object.fromEntries(actions.filter(a => a.name.startsWith("things.")).map(a => [a.name, a.action.params]));
	} finally {
		await Promise.all([owner.stop(), viewer.stop()]);
	}
}

it("reach another node whole", async () => {
	expect(await remoteView(true)).toEqual({ "things.list": whole, "things.mine": whole });
});

it("would reach it with holes without the copies (why the middleware exists)", async () => {
	const view = (await remoteView(false))["things.list"] as Record<string, any>;
	expect(Object.keys(view)).toEqual(["page", "scope"]);
	expect(view.scope.rules[1].items).toEqual({ type: "enum" });
});

it("copies plain data deeply and keeps functions", () => {
	const fn = () => 1;
	const original = { a: [page, page], fn, re: /x/ };
	const copy = copyPlain(original);
	expect(copy).toEqual(original);
	expect(copy.a[0]).not.toBe(copy.a[1]);
	expect(copy.fn).toBe(fn);
	expect(copy.re).toBe(original.re);
});
