/**
 * Schemathesis, from PyPI (the version pinned in test/support/schemathesis-requirements.txt, in a
 * virtual environment that .ci/install-schemathesis makes in the peers' cache), run against a running gateway's own
 * OpenAPI document. Its configuration is written for the run: the seeded records' identifiers are a
 * dictionary for each path parameter of their name, so that generated requests reach records that
 * exist as well as ones that do not.
 */
import { spawn } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import { PEER_CACHE } from "./peer-cache";
import { ROOT } from "./processes";

const REQUIREMENTS = path.join(ROOT, "test/support/schemathesis-requirements.txt");
const VERSION = /^schemathesis==(\S+)$/m.exec(fs.readFileSync(REQUIREMENTS, "utf8"))![1];

/** The Schemathesis command: SCHEMATHESIS_BIN, or where .ci/install-schemathesis puts it. */
export function schemathesisBin(): string {
	const bin = process.env.SCHEMATHESIS_BIN ?? path.join(PEER_CACHE, `schemathesis-${VERSION}`, "bin/schemathesis");
	if (!fs.existsSync(bin)) {
		throw new Error(`Schemathesis ${VERSION} is not at ${bin}: bash .ci/install-schemathesis installs it (\`npm test\` does)`);
	}
	return bin;
}

type Parameter = { in: string; name: string; schema?: { type?: unknown } };
type Operation = { operationId?: string; parameters?: Parameter[]; responses?: Record<string, { $ref?: string }> };
type Document = { paths: Record<string, Record<string, Operation>> };

/**
 * What Schemathesis expects of a request its schema says is valid (its default), with the gateway's
 * limits of a whole request, which no field's schema states: a body over MAX_BODY_BYTES (413), a
 * request head over Node's (431); and, where the document says so, a 400 too.
 */
const ACCEPTANCES = ["2xx", "3xx", "401", "403", "404", "409", "413", "429", "431", "5xx"];

/**
 * What a 4xx that refuses a request the document says is invalid may be: Schemathesis's list, and
 * the gateway's own refusals of what it cannot read at all, a body too large (413) and a request
 * head too long (431).
 */
const REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "431", "5xx"];

/** `ids[OWN_KEY + operationId]`: the SSH key that operation's requests carry, in place of the shared `sshKey`. */
export const OWN_KEY = "sshKey:";

/** Parameters whose valid values only the service makes, by binding, with the seeded value's name in `ids`. */
const MADE_VALUES: Record<string, string> = { "body.key": "sshKey", "query.cursor": "cursor" };

/**
 * The run's schemathesis.toml: parameters the service does not know are not generated (GitLab, and
 * this service, ignore them: docs/api.md#parameters); the refusals above; each seeded identifier
 * offered, most of the time, to every path and query parameter of its name, as the number or the
 * text that parameter's schema takes; values no schema can make always; and, where an operation's
 * 400 may refuse what its schema cannot tell from good input (the document's `RuleRefusal`: a
 * name already taken, a key that does not parse), a 400 is no failure of its valid requests.
 */
export function schemathesisConfig(document: Document, ids: Record<string, string>): string {
	const head = [
		"[generation]",
		"allow-extra-parameters = false",
		// The credentials are the ones the run gives (a token, the shared secret), not made up beside them.
		"with-security-parameters = false",
		"",
		"[checks.positive_data_acceptance]",
		`expected-statuses = ${JSON.stringify(ACCEPTANCES)}`,
		"",
		"[checks.negative_data_rejection]",
		`expected-statuses = ${JSON.stringify(REFUSALS)}`,
		"",
	];
	const dictionaries = new Map<string, unknown>();
	const bindings = ["[parameters]"];
	for (const [key, name] of Object.entries(MADE_VALUES))
		if (ids[name] !== undefined) {
			dictionaries.set(name, ids[name]);
			bindings.push(`"${key}" = { dictionary = "${name}", probability = 1.0 }`);
		}
	const operations: string[] = [];
	for (const item of Object.values(document.paths))
		for (const op of Object.values(item)) {
			const lines: string[] = [];
			for (const p of op.parameters ?? []) {
				const key = `${p.in}.${p.name}`;
				if ((p.in !== "path" && p.in !== "query") || ids[p.name] === undefined || MADE_VALUES[key]) continue;
				const number = p.schema?.type === "integer";
				const dictionary = `${p.name}_${number ? "number" : "text"}`;
				dictionaries.set(dictionary, number ? Number(ids[p.name]) : ids[p.name]);
				lines.push(`parameters."${key}" = { dictionary = "${dictionary}", probability = 0.8 }`);
			}
			// A create of deploy keys has a key of its own (OWN_KEY): one SSH key is one record under every
			// path that names it, so a key two creates shared could be removed under the other's path, which
			// Schemathesis's stateful phase cannot tell from a lost record.
			const ownKey = ids[`${OWN_KEY}${op.operationId}`];
			if (ownKey !== undefined) {
				dictionaries.set(`sshKey_${op.operationId}`, ownKey);
				lines.push(`parameters."body.key" = { dictionary = "sshKey_${op.operationId}", probability = 1.0 }`);
			}
			if (op.responses?.["400"]?.$ref === "#/components/responses/RuleRefusal")
				lines.push(`checks.positive_data_acceptance.expected-statuses = ${JSON.stringify([...ACCEPTANCES, "400"])}`);
			if (lines.length) operations.push("[[operations]]", `include-operation-id = ${JSON.stringify(op.operationId)}`, ...lines, "");
		}
	const dictionaryLines = ["[dictionaries]", ...[...dictionaries].map(([name, value]) => `${name} = { values = [${JSON.stringify(value)}] }`)];
	return [...head, ...dictionaryLines, "", ...bindings, "", ...operations].join("\n");
}

export interface SchemathesisRun {
	code: number | null;
	output: string;
}

export interface SchemathesisOptions {
	/** The document's URL (…/api/v3/openapi.json). */
	document: string;
	/** Headers every request carries (the credentials). */
	headers: Record<string, string>;
	/** Identifiers of seeded records, by path parameter name. */
	ids: Record<string, string>;
	/** Schemathesis's phases to run, in its order. */
	phases: ("examples" | "coverage" | "fuzzing" | "stateful")[];
	maxExamples: number;
	maxSeconds: number;
	seed: number;
}

export async function runSchemathesis(opts: SchemathesisOptions): Promise<SchemathesisRun> {
	const bin = schemathesisBin();
	const document = (await (await fetch(opts.document)).json()) as Document;
	// Its own directory: the config, and the examples database Hypothesis keeps.
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-schemathesis-"));
	fs.writeFileSync(path.join(dir, "schemathesis.toml"), schemathesisConfig(document, opts.ids));
	const args = [
		"--config-file",
		path.join(dir, "schemathesis.toml"),
		"run",
		opts.document,
		...Object.entries(opts.headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]),
		"--checks",
		"all",
		"--phases",
		opts.phases.join(","),
		"--max-examples",
		String(opts.maxExamples),
		"--max-time",
		String(opts.maxSeconds),
		"--seed",
		String(opts.seed),
		"--workers",
		"1",
		"--request-timeout",
		"15",
		"--no-color",
	];
	try {
		return await new Promise((resolve, reject) => {
			const child = spawn(bin, args, { cwd: dir });
			let output = "";
			child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
			child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
			child.on("error", reject);
			child.on("close", code => resolve({ code, output }));
		});
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** What a run found: its FAILURES section (each with how to reproduce it) and its seed; empty when it found nothing. */
export function failuresOf(run: SchemathesisRun): string {
	if (run.code === 0) return "";
	const failures = /={5,} FAILURES ={5,}\n([\s\S]*?)\n={5,}/.exec(run.output)?.[1];
	return failures ?? run.output.slice(-4000);
}
