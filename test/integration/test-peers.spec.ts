/** The real peers the integration workers are tested against start, work and stop cleanly. */
import net from "net";
import nodemailer from "nodemailer";
import { waitFor } from "../support/http";
import { listenOnIrc, startIrcServer } from "../support/peers/irc-server";
import { startSmtpSink } from "../support/peers/smtp-sink";
import { startTaskTracker } from "../support/peers/task-tracker";

function portClosed(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const s = net.connect(port, "127.0.0.1");
		s.once("connect", () => (s.destroy(), resolve(false)));
		s.once("error", () => resolve(true));
	});
}

describe("test peers", () => {
	it("ngircd: a listener in a keyed channel hears another client's PRIVMSG", async () => {
		const irc = await startIrcServer();
		try {
			const listener = await listenOnIrc(irc, "#peers", { key: "sesame" });
			const sender = await listenOnIrc(irc, "#other");
			const talker = net.connect(irc.port, irc.host);
			await new Promise(r => talker.once("connect", r));
			talker.write("NICK talker1\r\nUSER talker1 0 * :t\r\n");
			let seen = "";
			talker.on("data", (d: Buffer) => (seen += d.toString()));
			await waitFor("talker registered", () => Promise.resolve(seen.includes(" 001 ")));
			talker.write("JOIN #peers wrongkey\r\n");
			await waitFor("bad key refused", () => Promise.resolve(seen.includes(" 475 ")));
			talker.write("JOIN #peers sesame\r\nPRIVMSG #peers :hello there\r\n");
			await waitFor("message heard", () => Promise.resolve(listener.messages.length === 1));
			expect(listener.messages).toEqual([{ from: "talker1", target: "#peers", text: "hello there" }]);
			talker.destroy();
			await sender.close();
			await listener.close();
		} finally {
			await irc.stop();
		}
		expect(await portClosed(irc.port)).toBe(true);
	});

	it("smtp-server: receives and parses a nodemailer message, and can refuse", async () => {
		const sink = await startSmtpSink();
		try {
			const transport = nodemailer.createTransport({ host: "127.0.0.1", port: sink.port, secure: false, ignoreTLS: true });
			await transport.sendMail({ from: "gitlab@example.com", to: "dev@example.com", subject: "Hi", text: "body" });
			expect(sink.messages).toHaveLength(1);
			expect(sink.messages[0].subject).toBe("Hi");
			expect(sink.messages[0].text).toBe("body\n");
			expect(sink.envelopes).toEqual([{ from: "gitlab@example.com", to: ["dev@example.com"] }]);
			sink.refuse(451);
			await expect(transport.sendMail({ from: "gitlab@example.com", to: "dev@example.com", subject: "No", text: "x" })).rejects.toMatchObject({
				responseCode: 451,
			});
			expect(sink.refused).toBe(1);
			transport.close();
		} finally {
			await sink.stop();
		}
		expect(await portClosed(sink.port)).toBe(true);
	});

	it("task tracker: records requests, keeps comments and completion, and can be down", async () => {
		const tracker = await startTaskTracker(["12"]);
		try {
			const auth = { Authorization: "Bearer k", "Content-Type": "application/json" };
			expect((await fetch(`${tracker.apiUrl}/tasks/12`, { headers: auth })).status).toBe(200);
			expect((await fetch(`${tracker.apiUrl}/tasks/13`, { headers: auth })).status).toBe(404);
			expect((await fetch(`${tracker.apiUrl}/tasks/12`)).status).toBe(401);
			const post = await fetch(`${tracker.apiUrl}/tasks/12/stories`, { method: "POST", headers: auth, body: JSON.stringify({ data: { text: "c1" } }) });
			expect(post.status).toBe(201);
			await fetch(`${tracker.apiUrl}/tasks/12`, { method: "PUT", headers: auth, body: JSON.stringify({ data: { completed: true } }) });
			expect(tracker.comments.get("12")).toEqual(["c1"]);
			expect(tracker.tasks.get("12")).toBe(true);
			tracker.down(503);
			expect((await fetch(`${tracker.apiUrl}/tasks/12`, { headers: auth })).status).toBe(503);
			expect(tracker.requests.map(r => `${r.method} ${r.path}`)).toEqual([
				"GET /api/1.0/tasks/12",
				"GET /api/1.0/tasks/13",
				"GET /api/1.0/tasks/12",
				"POST /api/1.0/tasks/12/stories",
				"PUT /api/1.0/tasks/12",
				"GET /api/1.0/tasks/12",
			]);
		} finally {
			await tracker.stop();
		}
		expect(await portClosed(tracker.port)).toBe(true);
	});
});
