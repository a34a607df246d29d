import { buildIrcMessages, clean } from "../../../../../lib/integrations/irc-gateway/messages";
import { describeTarget, IRC_ADDRESS_SECRETS, parseRecipients, parseTarget, serverKey } from "../../../../../lib/integrations/irc-gateway/recipients";
import { validatePushPayload } from "../../../../../lib/push/payload";
import { pushBody, sha, ZERO } from "../../../../support/push-fixtures";

describe("IRC recipients (GitLab's IrkerService rules)", () => {
	it("keeps full irc/ircs URIs and drops what is not one", () => {
		expect(parseRecipients("irc://irc.example.com/#dev ircs://irc.example.com:7000/ops http://x.com/#y #bare irc://irc.example.com/")).toEqual([
			"irc://irc.example.com/#dev",
			"ircs://irc.example.com:7000/ops",
		]);
	});

	it("joins bare channels and nicks to default_irc_uri", () => {
		expect(parseRecipients("#dev ops  alice,isnick\nkeyed?key=s3cret", "irc://irc.example.com:6697/")).toEqual([
			"irc://irc.example.com:6697/#dev",
			"irc://irc.example.com:6697/ops",
			"irc://irc.example.com:6697/alice,isnick",
			"irc://irc.example.com:6697/keyed?key=s3cret",
		]);
		expect(parseRecipients("irc://other.example.com/#x", "irc://irc.example.com/")).toEqual(["irc://other.example.com/#x"]);
		expect(parseRecipients("#dev", "not a uri")).toEqual([]);
		expect(parseRecipients("#dev #dev", "irc://h/")).toEqual(["irc://h/#dev"]);
	});

	it("turns URIs into targets the way irkerd reads them", () => {
		expect(parseTarget("irc://irc.example.com/#dev")).toEqual({
			uri: "irc://irc.example.com/#dev",
			tls: false,
			host: "irc.example.com",
			port: 6667,
			password: undefined,
			nick: undefined,
			target: "#dev",
			isNick: false,
			key: undefined,
		});
		expect(parseTarget("ircs://bot:pw@irc.example.com/ops?key=k1")).toMatchObject({
			tls: true,
			port: 6697,
			password: "pw",
			nick: "bot",
			target: "#ops",
			key: "k1",
		});
		expect(parseTarget("irc://h:7000/alice,isnick")).toMatchObject({ port: 7000, target: "alice", isNick: true });
		expect(parseTarget("irc://h/&local")).toMatchObject({ target: "&local" });
		expect(parseTarget("irc://h/#chan?key=k2")).toMatchObject({ target: "#chan", key: "k2" });
		expect(parseTarget("irc://[::1]:6667/dev")).toMatchObject({ host: "::1", target: "#dev" });
	});

	it("refuses targets that could break the IRC line", () => {
		for (const uri of ["irc://h/a%0D%0AQUIT", "irc://h/a%20b", "irc://h/#x?key=a%0Ab", "irc://h/%23a,%23b", "irc://h/#", "irc://evil%0Anick@h/#x"])
			expect({ uri, t: parseTarget(uri) }).toEqual({ uri, t: null });
		expect(parseRecipients("irc://h/a%0D%0AQUIT")).toEqual([]);
	});

	it("share a server connection only when scheme, host, port and channel key agree", () => {
		const key = (uri: string) => serverKey(parseTarget(uri)!);
		expect(key("irc://a/#x")).toBe(key("irc://a/#y"));
		expect(key("irc://A/#x")).toBe(key("irc://a:6667/#x"));
		expect(key("irc://a:6697/#z")).not.toBe(key("irc://a/#x"));
		expect(key("ircs://a/#x")).not.toBe(key("irc://a:6697/#z"));
		// A channel key is part of the connection: a keyed channel's connection is not shared with a target without it.
		expect(key("irc://a/#s?key=k")).toBe(key("irc://a/#t?key=k"));
		expect(key("irc://a/#s?key=k")).not.toBe(key("irc://a/#s"));
	});

	it("are described for logs without the server password or the channel key", () => {
		expect(describeTarget(parseTarget("ircs://bot:s3cret@irc.example.net:6697/#ops?key=hunter2")!)).toBe("ircs://irc.example.net:6697/#ops");
		expect(describeTarget(parseTarget("irc://irc.example.net/alice,isnick")!)).toBe("irc://irc.example.net:6667/alice");
	});
});

describe("IRC messages (GitLab's IrkerWorker texts)", () => {
	const opts = { gitlabUrl: "http://gitlab.example.com", colorize: false };

	it("summarises a push with the compare link and at most 3 commit lines", () => {
		const body = pushBody({
			path: "acme/web",
			userName: "Jane",
			commits: [
				{ message: "First\n\nbody", author: "A", added: ["a.txt"], modified: [] },
				{ message: "Second", author: "B", modified: ["x", "y"] },
				{ message: "Third", author: "C", removed: ["z"], modified: [] },
				{ message: "Fourth", author: "D" },
			],
		});
		const push = validatePushPayload(body);
		expect(buildIrcMessages(push, opts)).toEqual([
			`[web] Jane pushed 4 new commits to master: http://gitlab.example.com/acme/web/compare/${push.before.slice(0, 8)}...${push.after.slice(0, 8)}`,
			`web/master ${push.commits[0].id.slice(0, 8)} A (1 file): First`,
			`web/master ${push.commits[1].id.slice(0, 8)} B (2 files): Second`,
			`web/master ${push.commits[2].id.slice(0, 8)} C (1 file): Third`,
		]);
	});

	it("says 1 new commit, and announces created and deleted branches", () => {
		const commits = [{ message: "One" }];
		const created = validatePushPayload(pushBody({ path: "acme/web", ref: "refs/heads/feat", before: ZERO, userName: "Jane", commits }));
		const lines = buildIrcMessages(created, opts);
		expect(lines[0]).toBe("[web] Jane has created a new branch feat: http://gitlab.example.com/acme/web/branches");
		expect(lines[1]).toBe(`[web] Jane pushed 1 new commit to feat: http://gitlab.example.com/acme/web/compare/00000000...${created.after.slice(0, 8)}`);
		expect(lines).toHaveLength(3);
		const deleted = validatePushPayload(
			pushBody({ path: "acme/web", ref: "refs/heads/old", before: sha("x"), after: ZERO, userName: "Jane", commits: [], total: 0 }),
		);
		expect(buildIrcMessages(deleted, opts)).toEqual(["[web] Jane has deleted the branch old"]);
	});

	it("colours with mIRC codes when asked", () => {
		const push = validatePushPayload(pushBody({ path: "acme/web", userName: "Jane", commits: [{ message: "Only", author: "A", modified: ["f"] }] }));
		const [summary, commit] = buildIrcMessages(push, { ...opts, colorize: true });
		expect(summary).toBe(
			`[\x0304web\x0f] Jane pushed \x021\x0f new commit to \x0305master\x0f: \x0302\x1fhttp://gitlab.example.com/acme/web/compare/${push.before.slice(0, 8)}...${push.after.slice(0, 8)}\x0f`,
		);
		expect(commit).toBe(`\x0304web\x0f/\x0305master\x0f \x0314${push.after.slice(0, 8)}\x0f A (\x03121 file\x0f): Only`);
	});

	it("strips CR/LF and control codes from every value, and uses GitLab's commit title", () => {
		const long = "x".repeat(120);
		const push = validatePushPayload(
			pushBody({
				path: "acme/web",
				userName: "Eve\r\nQUIT :bye",
				commits: [{ message: `Title\rPRIVMSG #x :spam\nmore`, author: "Mal\nlory" }, { message: long }],
			}),
		);
		const lines = buildIrcMessages(push, opts);
		for (const l of lines) expect(l).not.toMatch(/[\r\n\0]/);
		expect(lines[0]).toContain("Eve QUIT :bye pushed");
		expect(lines[1]).toMatch(/Mal lory \(1 file\): Title PRIVMSG #x :spam$/);
		expect(lines[2]).toMatch(new RegExp(`: ${"x".repeat(80)}…$`));
		expect(clean("a\x03\x02b")).toBe("a b");
	});

	it("sends nothing for tag pushes", () => {
		expect(buildIrcMessages(validatePushPayload(pushBody({ ref: "refs/tags/v1" })), opts)).toEqual([]);
	});
});

describe("the secrets in an IRC address text", () => {
	it("are left out of what is shown: channel keys and server passwords, nothing else", () => {
		expect(IRC_ADDRESS_SECRETS.shown("irc://h/#dev ops?key=k1  ircs://bot:pw@h:6697/#ci?a=1&key=k2&b=2 irc://nick@h/x,isnick")).toBe(
			"irc://h/#dev ops  ircs://bot@h:6697/#ci?a=1&b=2 irc://nick@h/x,isnick",
		);
		expect(IRC_ADDRESS_SECRETS.shown("irc://:pw@h:6697/")).toBe("irc://h:6697/");
	});

	it("come back from what is stored for a token sent without them, never for one sent with its own", () => {
		const stored = "irc://h/#dev?key=k1 ops?key=k2 irc://:pw@h/#x";
		expect(IRC_ADDRESS_SECRETS.kept("irc://h/#dev ops irc://h/#x #new", stored)).toBe("irc://h/#dev?key=k1 ops?key=k2 irc://:pw@h/#x #new");
		expect(IRC_ADDRESS_SECRETS.kept("ops?key=n3w irc://h/#dev", stored)).toBe("ops?key=n3w irc://h/#dev?key=k1");
		expect(IRC_ADDRESS_SECRETS.kept("irc://h/#other", stored)).toBe("irc://h/#other");
	});
});
