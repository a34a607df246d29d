import {
	allowedEmailDomains,
	buildPushEmail,
	canSendFromUserEmail,
	changedFiles,
	splitRecipients,
} from "../../../../../lib/integrations/emails-on-push/push-email";
import { validatePushPayload } from "../../../../../lib/push/payload";
import { pushBody, sha, ZERO } from "../../../../support/push-fixtures";
import { costRatio } from "../../../../support/timing";

const opts = { gitlabUrl: "http://gitlab.example.com", mailFrom: "gitlab@example.com", disableDiffs: false, sendFromCommitterEmail: false };
const diffs = [
	{ old_path: "README.md", new_path: "README.md", diff: "@@ -1 +1 @@\n-old\n+new\n" },
	{ old_path: "a.txt", new_path: "b.txt", renamed_file: true, diff: "" },
	{ old_path: "gone.txt", new_path: "gone.txt", deleted_file: true, diff: "@@ -1 +0,0 @@\n-bye\n" },
	{ old_path: "new.txt", new_path: "new.txt", new_file: true, diff: "@@ -0,0 +1 @@\n+hi\n" },
];

describe("push email (GitLab's RepositoryPush mail)", () => {
	it("renders a push of several commits: subject, commits, changed files, diffs, link", () => {
		const push = validatePushPayload(
			pushBody({
				path: "acme/web",
				userName: "Jane Doe",
				commits: [
					{ message: "Add feature\n\nLong text", author: "A" },
					{ message: "Fix typo", author: "B" },
				],
				diffs,
			}),
		);
		const mail = buildPushEmail(push, opts)!;
		expect(mail.subject).toBe("[Git][acme/web][master] 2 commits: Add feature");
		const [c1, c2] = push.commits;
		expect(mail.text).toBe(
			[
				"Jane Doe pushed to branch master at acme / web",
				"",
				"",
				"Commits:",
				`${c1.id.slice(0, 8)} by A at ${c1.timestamp}`,
				"Add feature\n\nLong text",
				"- - - - -",
				`${c2.id.slice(0, 8)} by B at ${c2.timestamp}`,
				"Fix typo",
				"- - - - -",
				"",
				"",
				"4 changed files:",
				"",
				"- README.md",
				"- a.txt → b.txt",
				"- − gone.txt",
				"- + new.txt",
				"",
				"",
				"Changes:",
				"",
				"=====================================",
				"README.md",
				"=====================================",
				"@@ -1 +1 @@\n-old\n+new",
				"",
				"=====================================",
				"a.txt → b.txt",
				"=====================================",
				"",
				"",
				"=====================================",
				"gone.txt deleted",
				"=====================================",
				"@@ -1 +0,0 @@\n-bye",
				"",
				"=====================================",
				"new.txt",
				"=====================================",
				"@@ -0,0 +1 @@\n+hi",
				"",
				"",
				`View it on GitLab: http://gitlab.example.com/acme/web/compare/${push.before}...${push.after}`,
				"",
			].join("\n"),
		);
		expect(mail.from).toEqual({ name: "Jane Doe", address: "gitlab@example.com" });
		expect(mail.replyTo).toBe("gitlab@example.com");
		expect(mail.headers).toEqual({ "X-GitLab-Project": "web", "X-GitLab-Project-Id": "1", "X-GitLab-Project-Path": "acme/web" });
	});

	it("leaves the diffs out when disable_diffs is on, keeping commits and files", () => {
		const push = validatePushPayload(pushBody({ commits: [{ message: "One" }], diffs }));
		const mail = buildPushEmail(push, { ...opts, disableDiffs: true })!;
		expect(mail.subject).toBe("[Git][root/demo][master] One");
		expect(mail.text).toContain("4 changed files:");
		expect(mail.text).not.toContain("Changes:");
		expect(mail.text).not.toContain("@@");
		expect(mail.text).toContain(`View it on GitLab: http://gitlab.example.com/root/demo/commit/${push.commits[0].id}`);
	});

	it("says the diff is too large past GitLab's limits", () => {
		const many = Array.from({ length: 31 }, (_, i) => ({ old_path: `f${i}`, new_path: `f${i}`, diff: "+x\n" }));
		const mail = buildPushEmail(validatePushPayload(pushBody({ diffs: many })), opts)!;
		expect(mail.text).toContain("31 changed files:");
		expect(mail.text).toContain("The diff was not included because it is too large.");
		const tooLarge = buildPushEmail(validatePushPayload(pushBody({ diffs: [{ old_path: "big", new_path: "big", too_large: true }] })), opts)!;
		expect(tooLarge.text).toContain("big\n=====================================\nThe diff for this file was not included because it is too large.");
	});

	it("lists changed files from the commits when the payload has no diffs", () => {
		const push = validatePushPayload(
			pushBody({
				commits: [
					{ message: "a", added: ["n.txt", "tmp.txt"], modified: ["m.txt"] },
					{ message: "b", removed: ["tmp.txt", "old.txt"], modified: ["n.txt"] },
				],
			}),
		);
		expect(changedFiles(push).map(f => [f.new_path, f.new_file, f.deleted_file])).toEqual([
			["n.txt", true, false],
			["m.txt", false, false],
			["old.txt", false, true],
		]);
		expect(buildPushEmail(push, opts)!.text).not.toContain("Changes:");
	});

	it("announces new and deleted branches and tags, with GitLab's subjects", () => {
		const created = buildPushEmail(validatePushPayload(pushBody({ ref: "refs/heads/feature", before: ZERO, userName: "Jane" })), opts)!;
		expect(created.subject).toBe("[Git][root/demo] Pushed new branch feature");
		expect(created.text).toBe("Jane pushed new branch feature at root / demo\n\n\nView it on GitLab: http://gitlab.example.com/root/demo/tree/feature\n");
		const tag = buildPushEmail(validatePushPayload(pushBody({ ref: "refs/tags/v1.0", before: ZERO })), opts)!;
		expect(tag.subject).toBe("[Git][root/demo] Pushed new tag v1.0");
		const deleted = buildPushEmail(
			validatePushPayload(pushBody({ ref: "refs/heads/old", before: sha("b"), after: ZERO, commits: [], total: 0, userName: "Jane" })),
			opts,
		)!;
		expect(deleted.subject).toBe("[Git][root/demo] Deleted branch old");
		expect(deleted.text).toBe("Jane deleted branch old at root / demo\n");
	});

	it("sends nothing for a push without new commits", () => {
		expect(buildPushEmail(validatePushPayload(pushBody({ commits: [], total: 0, after: sha("a") })), opts)).toBeNull();
	});

	it("counts all commits in the subject when the payload holds only the last 20", () => {
		const commits = Array.from({ length: 20 }, (_, i) => ({ message: `c${i}` }));
		expect(buildPushEmail(validatePushPayload(pushBody({ commits, total: 25 })), opts)!.subject).toBe("[Git][root/demo][master] 25 commits: c0");
	});

	it("sends from the pusher's address only with send_from_committer_email and an instance domain", () => {
		const fromCorp = validatePushPayload(pushBody({ userEmail: "jane@corp.example.com", userName: "Jane", extra: { user_username: "jane" } }));
		const corp = { ...opts, gitlabUrl: "https://gitlab.corp.example.com", sendFromCommitterEmail: true };
		expect(buildPushEmail(fromCorp, corp)).toMatchObject({ from: { name: "Jane", address: "jane@corp.example.com" }, replyTo: "jane@corp.example.com" });
		expect(buildPushEmail(fromCorp, corp)!.headers["X-GitLab-Author"]).toBe("jane");
		expect(buildPushEmail(fromCorp, { ...corp, sendFromCommitterEmail: false })!.from.address).toBe("gitlab@example.com");
		const outsider = validatePushPayload(pushBody({ userEmail: "eve@evil.com" }));
		expect(buildPushEmail(outsider, corp)!.from.address).toBe("gitlab@example.com");
	});

	it("computes the instance's allowed e-mail domains as GitLab does", () => {
		expect(allowedEmailDomains("https://gitlab.corp.example.com")).toEqual(["gitlab.corp.example.com", "corp.example.com", "example.com"]);
		expect(allowedEmailDomains("https://gitlab.example.co.uk")).toEqual(["gitlab.example.co.uk", "example.co.uk"]);
		expect(allowedEmailDomains("http://localhost")).toEqual(["localhost"]);
		expect(canSendFromUserEmail("a@EXAMPLE.com", "https://gitlab.example.com")).toBe(true);
		expect(canSendFromUserEmail("a@sub.gitlab.example.com", "https://gitlab.example.com")).toBe(false);
	});

	it("sends from the pusher's address only when it is one plain address (a header would read more into others)", () => {
		for (const email of [
			"ceo@evil.com x@gitlab.example.com",
			"ceo@evil.com,x@example.com",
			"<ceo@evil.com>x@example.com",
			'"x"@example.com',
			"x@example.com\r\nBcc: y@evil.com",
		])
			expect({ email, allowed: canSendFromUserEmail(email, "https://gitlab.example.com") }).toEqual({ email, allowed: false });
		const push = validatePushPayload(pushBody({ userEmail: "ceo@evil.com x@gitlab.example.com" }));
		const mail = buildPushEmail(push, {
			gitlabUrl: "https://gitlab.example.com",
			mailFrom: "gitlab@example.com",
			disableDiffs: true,
			sendFromCommitterEmail: true,
		});
		expect([mail?.from.address, mail?.replyTo]).toEqual(["gitlab@example.com", "gitlab@example.com"]);
	});

	it("splits recipients on whitespace only, as GitLab", () => {
		const expected = { valid: ["a@x.com", "b@y.org"], invalid: ["c@z.io,d@w.io", "nope"] };
		expect(splitRecipients(" a@x.com\n b@y.org  a@x.com c@z.io,d@w.io nope ")).toEqual(expected);
	});

	it("takes an address given again in another case once, as first spelled (its delivery is keyed in lower case)", () => {
		const { valid } = splitRecipients("Dev@Example.com ops@example.com dev@example.COM DEV@EXAMPLE.COM");
		expect(valid).toEqual(["Dev@Example.com", "ops@example.com"]);
	});

	it("keeps header values on one line", () => {
		const push = validatePushPayload(pushBody({ userName: "Jane\r\nBcc: x@y.z", commits: [{ message: "a" }] }));
		const mail = buildPushEmail(push, opts)!;
		expect(mail.from.name).not.toMatch(/[\r\n]/);
		expect(mail.subject).not.toMatch(/[\r\n]/);
	});

	it("costs time in proportion to a commit message or diff, whatever it holds (a pusher writes them)", () => {
		const n = 20_000;
		// Newlines followed by something else: `/\n+$/` tried each run from each newline (quadratic).
		const mailFor = (text: string) => {
			const push = validatePushPayload(pushBody({ commits: [{ message: text }], diffs: [{ old_path: "a", new_path: "a", diff: text }] }));
			return () => buildPushEmail(push, opts);
		};
		const hostile = mailFor("\n".repeat(n) + "x");
		const ordinary = mailFor("a\n".repeat(n / 2) + "x");
		expect(hostile()!.text).toContain("\n".repeat(100) + "x");
		const ratio = costRatio(hostile, ordinary);
		// The regex took thousands of times as long here.
		expect(ratio).toBeLessThan(10);
	});

	it("drops only the newlines that end a commit message or diff", () => {
		const push = validatePushPayload(
			pushBody({ commits: [{ message: "Title\n\nBody\n\n\n" }], diffs: [{ old_path: "a", new_path: "a", diff: "@@ -1 +1 @@\n-a\n+b\n\n" }] }),
		);
		const text = buildPushEmail(push, opts)!.text;
		expect(text).toContain("Title\n\nBody\n- - - - -");
		expect(text).toContain("+b\n\n");
	});
});
