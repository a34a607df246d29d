/**
 * The broker's log lines with the correlation id of the request or delivery they were written for
 * (docs/operations.md#correlation-ids): a Moleculer Console-logger formatter. JSON lines as
 * Moleculer's "json" formatter writes them, plus `correlation_id`; text lines as its "short" one,
 * with the id in brackets after the module.
 */
import { correlationId } from "./correlation";

type Bindings = Record<string, unknown> & { mod?: string };
/** What Moleculer's formatted logger passes a formatter function (and binds it to). */
type LoggerThis = { levelColorStr?: Record<string, string> };
type Helpers = { printArgs: (args: unknown[]) => unknown[] };

export type LogFormatter = (this: LoggerThis, type: string, args: unknown[], bindings: Bindings, helpers: Helpers) => unknown[];

export function logFormatter(format: "json" | "text"): LogFormatter {
	if (format === "json")
		return function jsonLine(type, args, bindings, { printArgs }) {
			const id = correlationId();
			const line = { ts: Date.now(), level: type, msg: printArgs(args).join(" "), ...(id ? { correlation_id: id } : {}), ...bindings };
			return [JSON.stringify(line)];
		};
	return function textLine(type, args, bindings, { printArgs }) {
		const id = correlationId();
		const level = this.levelColorStr?.[type] ?? type.toUpperCase().padEnd(5);
		const head = [`[${new Date().toISOString().substring(11)}]`, level, `${String(bindings.mod ?? "").toUpperCase()}:`];
		return id ? [...head, `[${id}]`, ...printArgs(args)] : [...head, ...printArgs(args)];
	};
}
