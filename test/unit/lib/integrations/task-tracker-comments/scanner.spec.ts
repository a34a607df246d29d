import { validatePushPayload } from "../../../../../lib/push/payload";
import { branchAllowed, commentText, planComments, scanMessage } from "../../../../../lib/integrations/task-tracker-comments/scanner";
import { pushBody } from "../../../../support/push-fixtures";
import { costRatio } from "../../../../support/timing";

describe("task tracker scanner (GitLab's Asana generation B)", () => {
	it("finds #ids and task URLs, in order", () => {
		expect(scanMessage("Refs #12 and https://app.asana.com/0/98/345 then #7")).toEqual([
			{ taskId: "12", complete: false },
			{ taskId: "345", complete: false },
			{ taskId: "7", complete: false },
		]);
	});

	it("completes a task when a word starting with fix or clos comes before it", () => {
		for (const msg of ["fix #12", "Fixes #12", "fixed: #12", "FIXING #12", "closes #12", "Closed #12", "closing #12", "close https://app.asana.com/1/2/12"])
			expect({ msg, found: scanMessage(msg) }).toEqual({ msg, found: [{ taskId: "12", complete: true }] });
	});

	it("does not complete on a keyword inside another word, or on other words", () => {
		for (const msg of ["prefix #12", "suffix #12", "enclosed #12", "see #12", "closure #12"])
			expect({ msg, found: scanMessage(msg) }).toEqual({ msg, found: [{ taskId: "12", complete: false }] });
	});

	it("scans the whole message, across lines, and mentions a task once with completion winning", () => {
		expect(scanMessage("Work on #5\n\nAlso #6.\nfix #5")).toEqual([
			{ taskId: "5", complete: true },
			{ taskId: "6", complete: false },
		]);
		expect(scanMessage("no tasks here, # 12, #abc")).toEqual([]);
	});

	it("completes across any punctuation, and never on a word that is not the last before the mention", () => {
		expect(scanMessage("fix: -- #12; closes...https://app.asana.com/0/1/13 #14")).toEqual([
			{ taskId: "12", complete: true },
			{ taskId: "13", complete: true },
			{ taskId: "14", complete: false },
		]);
		expect(scanMessage("fix the bug, see #12")).toEqual([{ taskId: "12", complete: false }]);
		expect(scanMessage("fix#12 then #12a")).toEqual([{ taskId: "12", complete: true }]);
	});

	it("costs time in proportion to the message, whatever it holds (a pusher writes the commit messages)", () => {
		// Long runs of punctuation made GitLab's regex backtrack over each run from each of its positions.
		const size = 100_000;
		const hostile = ["!".repeat(size), "fix" + " -".repeat(size / 2) + "#1", "#".repeat(size), "https://app.asana.com/" + "1".repeat(size)];
		const ordinary = "Refactor the parser, fix #12 and see #13 for the rest.\n".repeat(size / 55);
		const ratios = hostile.map(message =>
			costRatio(
				() => scanMessage(message),
				() => scanMessage(ordinary),
			),
		);
		// GitLab's regex took thousands of times the ordinary message's time on these (quadratic).
		expect(Math.max(...ratios)).toBeLessThan(20);
	});

	it("takes task URLs of another tracker host when told", () => {
		expect(scanMessage("fix https://tasks.example.com/0/1/77", "tasks.example.com")).toEqual([{ taskId: "77", complete: true }]);
		expect(scanMessage("https://tasks.example.com/0/1/77")).toEqual([]);
	});

	it("restricts to the listed branches exactly, blank meaning all", () => {
		expect(branchAllowed("", "feature")).toBe(true);
		expect(branchAllowed(null, "feature")).toBe(true);
		expect(branchAllowed(" , ", "feature")).toBe(true);
		expect(branchAllowed("master, release", "release")).toBe(true);
		expect(branchAllowed("master,release", "rel")).toBe(false);
		expect(branchAllowed("master", "feature")).toBe(false);
	});

	it("plans one comment per commit and task with GitLab's text, for allowed branches of branch pushes only", () => {
		const commits = [{ message: "fix #12 crash" }, { message: "docs, see #12 and #13" }];
		const push = validatePushPayload(pushBody({ path: "acme/web", ref: "refs/heads/master", userName: "Jane", commits }));
		const plan = planComments(push, "master");
		expect(plan.map(p => [p.taskId, p.complete, p.commitId])).toEqual([
			["12", true, push.commits[0].id],
			["12", false, push.commits[1].id],
			["13", false, push.commits[1].id],
		]);
		expect(plan[0].text).toBe(`Jane pushed to branch master of acme / web ( ${push.commits[0].url} ): fix #12 crash`);
		expect(commentText(push, push.commits[1])).toBe(`Jane pushed to branch master of acme / web ( ${push.commits[1].url} ): docs, see #12 and #13`);
		expect(planComments(push, "release")).toEqual([]);
		const tag = validatePushPayload(pushBody({ ref: "refs/tags/v1", commits: [{ message: "fix #1" }] }));
		expect(planComments(tag, "")).toEqual([]);
	});
});
