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

/** Path parameters of the document by name, with whether their values are integers. */
function pathParameters(document: { paths: Record<string, Record<string, { parameters?: { in: string; name: string; schema?: { type?: unknown } }[] }>> }) {
	const integers = new Map<string, boolean>();
	for (const operations of Object.values(document.paths))
		for (const op of Object.values(operations))
			for (const p of op.parameters ?? []) if (p.in === "path") integers.set(p.name, (integers.get(p.name) ?? true) && p.schema?.type === "integer");
	return integers;
}

/** The run's schemathesis.toml: each seeded identifier offered to the path parameter of its name, most of the time. */
function configFor(document: Parameters<typeof pathParameters>[0], ids: Record<string, string>): string {
	const lines = ["[dictionaries]"];
	const bindings = ["[parameters]"];
	for (const [name, integer] of pathParameters(document)) {
		if (ids[name] === undefined) continue;
		lines.push(`${name} = { values = [${integer ? Number(ids[name]) : JSON.stringify(ids[name])}] }`);
		bindings.push(`"path.${name}" = { dictionary = "${name}", probability = 0.8 }`);
	}
	return [...lines, "", ...bindings, ""].join("\n");
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
	checks: string[];
	maxExamples: number;
	maxSeconds: number;
	seed: number;
}

export async function runSchemathesis(opts: SchemathesisOptions): Promise<SchemathesisRun> {
	const bin = schemathesisBin();
	const document = (await (await fetch(opts.document)).json()) as Parameters<typeof pathParameters>[0];
	// Its own directory: the config, and the examples database Hypothesis keeps.
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-schemathesis-"));
	fs.writeFileSync(path.join(dir, "schemathesis.toml"), configFor(document, opts.ids));
	const args = [
		"--config-file",
		path.join(dir, "schemathesis.toml"),
		"run",
		opts.document,
		...Object.entries(opts.headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]),
		"--checks",
		opts.checks.join(","),
		"--phases",
		"examples,coverage,fuzzing",
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
