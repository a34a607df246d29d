/**
 * The action's parameters checked at the gateway (gateway/edge/edge-validation.ts), with the broker's
 * own validator: the usual check, which throws GitLab's 400, and the at-once check the fast path
 * of a cached GET uses, which only says yes or no and leaves every refusal to the usual one.
 */
import { Errors, Validators } from "moleculer";
import { EdgeValidator } from "../../../../gateway/edge/edge-validation";

const validator = new EdgeValidator(new Validators.Fastest() as never);
const pages = { name: "labels.list", params: { id: "string", page: { type: "number", convert: true, optional: true } } };

it("converts the parameters in place, as the service would, and refuses what does not fit", async () => {
	const params: Record<string, unknown> = { id: "5", page: "2" };
	await validator.validate(pages, params);
	expect(params).toEqual({ id: "5", page: 2 });
	await expect(validator.validate(pages, { id: "5", page: "two" })).rejects.toBeInstanceOf(Errors.ValidationError);
});

it("answers at once: yes with the parameters converted, no for what the usual check refuses", () => {
	const params: Record<string, unknown> = { id: "5", page: "3" };
	expect(validator.passesNow(pages, params)).toBe(true);
	expect(params.page).toBe(3);
	expect(validator.passesNow(pages, { id: "5", page: "three" })).toBe(false);
	expect(validator.passesNow({ name: "labels.none" }, { anything: 1 })).toBe(true);
});

it("says no to a schema whose check cannot answer at once", async () => {
	const slow = {
		name: "labels.slow",
		params: { $$async: true, name: { type: "string", custom: (v: string) => Promise.resolve(v) } },
	};
	const params = { name: "bug" };
	expect(validator.passesNow(slow, params)).toBe(false);
	await expect(validator.validate(slow, params)).resolves.toBeUndefined();
});
