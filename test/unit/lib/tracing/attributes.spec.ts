import { ATTR } from "../../../../lib/tracing/attributes";

describe("span attribute names", () => {
	it("are distinct, lower-case dotted names (the conventions' own, or gitlab.*)", () => {
		const names = Object.values(ATTR);
		expect(new Set(names).size).toBe(names.length);
		for (const name of names) expect(name).toMatch(/^[a-z][a-z_]*(\.[a-z][a-z_]*)*$/);
	});

	it("name nothing that could hold a credential or a body", () => {
		for (const name of Object.values(ATTR)) expect(name).not.toMatch(/token|password|secret|key|auth|body|header|query|recipient_address/);
	});
});
