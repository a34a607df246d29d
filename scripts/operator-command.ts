/**
 * How the operator's data commands end (`npm run backup`, `restore`, `copy-store`,
 * `recover-store`): with the code `main` gives (0 when none), or, when it throws, with the reason
 * in one line on stderr, named after the command, and code 1. No stack trace: each refusal says
 * what is wrong and what to do.
 */
export function runOperatorCommand(name: string, main: () => number | void | Promise<number | void>): void {
	Promise.resolve()
		.then(main)
		.then(
			code => process.exit(code ?? 0),
			(err: unknown) => {
				console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
				process.exit(1);
			},
		);
}
