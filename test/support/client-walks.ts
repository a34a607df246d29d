/**
 * The results of a real client's walk (docs/clients.md): one `<resource>: N passed, N failed`
 * line per resource, shown in the test's output and checked against the number of calls each
 * resource must pass; `FAIL <resource>: <call>: <why>` lines name what did not.
 */
import { runCommand } from "./commands";

export interface WalkRun {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** Runs a walk script (`command args…`) with its input as JSON on stdin; resolves when it exits. */
export async function runWalk(command: string, args: string[], input: unknown): Promise<WalkRun> {
	const run = await runCommand(command, args, { input: JSON.stringify(input) });
	return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const SUMMARY = /^(\S+): (\d+) passed, (\d+) failed$/;

/** What the spec checks: how the run ended, its FAIL lines, and each resource's summary line. */
export function readWalk(client: string, run: WalkRun) {
	const lines = run.stdout.split("\n").filter(Boolean);
	console.log(`${client}\n${lines.map(l => `  ${l}`).join("\n")}${run.stderr ? `\n  stderr: ${run.stderr}` : ""}`);
	return {
		outcome: { code: run.code, stderr: run.stderr, failures: lines.filter(l => l.startsWith("FAIL ")) },
		summary: Object.fromEntries(lines.map(l => SUMMARY.exec(l)).flatMap(m => (m ? [[m[1], `${m[2]} passed, ${m[3]} failed`]] : []))),
	};
}

/** The summary of a walk in which each resource passed `counts[resource]` calls and failed none. */
export function allPassed(counts: Record<string, number>): Record<string, string> {
	return Object.fromEntries(Object.entries(counts).map(([resource, n]) => [resource, `${n} passed, 0 failed`]));
}

/** The same tally for a client driven in this process (gitbeaker): one check per call, by resource. */
export class Tally {
	private readonly results = new Map<string, { passed: number; failed: number; failures: string[] }>();

	/** Runs `fn` as the check `name` of `resource`, counting it; rethrows its failure for jest. */
	async check(resource: string, name: string, fn: () => Promise<void>): Promise<void> {
		const entry = this.results.get(resource) ?? { passed: 0, failed: 0, failures: [] };
		this.results.set(resource, entry);
		try {
			await fn();
			entry.passed++;
		} catch (err) {
			entry.failed++;
			entry.failures.push(`FAIL ${resource}: ${name}: ${(err as Error).message.split("\n")[0]}`);
			throw err;
		}
	}

	/** `<resource>` → `N passed, N failed`, as readWalk reads a script's lines. */
	summary(): Record<string, string> {
		return Object.fromEntries([...this.results].map(([resource, r]) => [resource, `${r.passed} passed, ${r.failed} failed`]));
	}

	/** The lines a walk script would print. */
	lines(): string[] {
		const out: string[] = [];
		for (const [resource, r] of this.results) out.push(...r.failures, `${resource}: ${r.passed} passed, ${r.failed} failed`);
		return out;
	}
}
