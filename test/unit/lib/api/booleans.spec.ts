/** v4's booleans (lib/api/booleans.ts): what clients send, in any case, as Grape reads them. */
import { ServiceBroker } from "moleculer";
import { BOOLEAN_PARAM, isTrue } from "../../../../lib/api/booleans";

it("reads true and false in every spelling a client sends", () => {
	for (const v of [true, "true", "True", "TRUE", "t", "yes", "Y", "on", "1", 1]) expect([v, isTrue(v)]).toEqual([v, true]);
	for (const v of [false, "false", "False", "f", "no", "N", "off", "0", 0]) expect([v, isTrue(v)]).toEqual([v, false]);
	expect(isTrue(undefined)).toBeUndefined();
});

it("lets only those through the schema, also after the schema crossed the transporter as JSON", () => {
	const schema = JSON.parse(JSON.stringify({ flag: BOOLEAN_PARAM })) as object;
	const check = new ServiceBroker({ logger: false }).validator!.compile(schema) as (p: object) => true | unknown[];
	for (const flag of [true, "True", "false", "1", "yes", undefined]) expect([flag, check({ flag })]).toEqual([flag, true]);
	for (const flag of ["maybe", "truthy", 2, {}]) expect(check({ flag })).not.toBe(true);
});
