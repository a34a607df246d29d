import { notifiesPush } from "../../../../lib/integrations/branches-to-be-notified";
import { findIntegration } from "../../../../lib/integrations/catalogue";
import type { PushPayload } from "../../../../lib/push/payload";

const MAIL = findIntegration("emails-on-push")!;
const CHAT = findIntegration("team-chat")!;
const push = (ref: string, defaultBranch: string | null = null) => ({ ref, project: { default_branch: defaultBranch } }) as unknown as PushPayload;

describe("branches_to_be_notified", () => {
	it("notifies every branch for `all`, and the default branch alone otherwise (the one protected here)", () => {
		for (const choice of ["default", "protected", "default_and_protected"]) {
			expect([choice, notifiesPush(MAIL, { branches_to_be_notified: choice }, push("refs/heads/master"))]).toEqual([choice, true]);
			expect([choice, notifiesPush(MAIL, { branches_to_be_notified: choice }, push("refs/heads/feature"))]).toEqual([choice, false]);
		}
		expect(notifiesPush(MAIL, { branches_to_be_notified: "all" }, push("refs/heads/feature"))).toBe(true);
	});

	it("takes the default branch the push's project names, else this service's", () => {
		const onlyDefault = { branches_to_be_notified: "default" };
		expect(notifiesPush(MAIL, onlyDefault, push("refs/heads/main", "main"))).toBe(true);
		expect(notifiesPush(MAIL, onlyDefault, push("refs/heads/master", "main"))).toBe(false);
		expect(notifiesPush(MAIL, onlyDefault, push("refs/heads/master", "  "))).toBe(true);
	});

	it("always notifies a tag push, and falls back to GitLab's default for the integration when unset", () => {
		expect(notifiesPush(MAIL, { branches_to_be_notified: "default" }, push("refs/tags/v1.0"))).toBe(true);
		// emails-on-push: `all`; slack: `default`.
		expect(notifiesPush(MAIL, {}, push("refs/heads/feature"))).toBe(true);
		expect(notifiesPush(CHAT, {}, push("refs/heads/feature"))).toBe(false);
		expect(notifiesPush(CHAT, {}, push("refs/heads/master"))).toBe(true);
	});
});
