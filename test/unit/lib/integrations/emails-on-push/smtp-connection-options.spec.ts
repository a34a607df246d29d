/** SMTP_URL read into connection options as nodemailer read it (lib/integrations/emails-on-push/smtp-pool.ts), so an operator's URL keeps working. */
import { smtpConnectionOptions } from "../../../../../lib/integrations/emails-on-push/smtp-pool";

it("reads the scheme, host, port and percent-encoded credentials, with the default ports", () => {
	expect(smtpConnectionOptions("smtp://gitlab%40example.com:p%3Ass@mail.example.com:2525")).toEqual({
		host: "mail.example.com",
		port: 2525,
		secure: false,
		auth: { user: "gitlab@example.com", pass: "p:ss" },
	});
	expect(smtpConnectionOptions("smtp://mail.example.com")).toEqual({ host: "mail.example.com", port: 587, secure: false });
	expect(smtpConnectionOptions("smtps://[::1]")).toEqual({ host: "::1", port: 465, secure: true });
});

it("passes query options on, tls.* nested, true/false and numbers typed, and never lets one replace the target", () => {
	const options = smtpConnectionOptions(
		"smtp://mail.example.com:25?ignoreTLS=true&requireTLS=false&name=gw.example.com&tls.rejectUnauthorized=false&tls.minVersion=TLSv1.2&dnsTimeout=500&host=evil.example&port=1&__proto__=x&tls.__proto__=y&constructor=z&a.b=c",
	);
	expect(options).toEqual({
		host: "mail.example.com",
		port: 25,
		secure: false,
		ignoreTLS: true,
		requireTLS: false,
		name: "gw.example.com",
		dnsTimeout: 500,
		tls: { rejectUnauthorized: false, minVersion: "TLSv1.2" },
	});
	expect(Object.getPrototypeOf(options)).toBe(Object.prototype);
	expect(Object.getPrototypeOf(options.tls)).toBe(Object.prototype);
});
