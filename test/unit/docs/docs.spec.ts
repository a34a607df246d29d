/**
 * The documents in docs/ keep up with the code: every routed endpoint is in docs/api.md, and every
 * `docs/<file>.md#<anchor>` that code, README or docs point at exists as an explicit anchor.
 */
import fs from "fs";
import path from "path";
import { ROOT } from "../../support/processes";
import { gatewayRoutes } from "../../support/routes";

const DOCS = path.join(ROOT, "docs");
const read = (file: string) => fs.readFileSync(file, "utf8");

/** `<a id="…">` anchors of each document. */
function anchors(): Map<string, Set<string>> {
	const out = new Map<string, Set<string>>();
	for (const f of fs.readdirSync(DOCS).filter(f => f.endsWith(".md")))
		out.set(f, new Set([...read(path.join(DOCS, f)).matchAll(/<a id="([^"]+)"><\/a>/g)].map(m => m[1])));
	return out;
}

function sourceFiles(dir: string): string[] {
	const out: string[] = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		if (["node_modules", "dist", ".git", ".tmp", "coverage"].includes(entry.name)) continue;
		const abs = path.join(dir, entry.name);
		if (entry.isDirectory()) out.push(...sourceFiles(abs));
		else if (/\.(ts|md)$/.test(entry.name)) out.push(abs);
	}
	return out;
}

it("docs/api.md names every endpoint the gateway routes", () => {
	const api = read(path.join(DOCS, "api.md"));
	const routes = gatewayRoutes();
	expect(routes.length).toBeGreaterThan(40);
	const missing = routes.map(r => `${r.method} ${r.fullPath}`).filter(endpoint => !api.includes(`\`${endpoint}`));
	expect(missing).toEqual([]);
});

it("every docs/…md#anchor cited in the code, the README and docs/ exists", () => {
	const known = anchors();
	expect(known.get("api.md")?.size).toBeGreaterThan(10);
	const broken: string[] = [];
	for (const file of sourceFiles(ROOT)) {
		const text = read(file);
		const inDocs = path.dirname(file) === DOCS;
		for (const m of text.matchAll(/(?:docs\/|\()([a-z-]+\.md)#([a-z0-9-]+)/g)) {
			const [, doc, anchor] = m;
			// Links inside docs/ are relative ("(api.md#labels)"); elsewhere they name docs/.
			if (!inDocs && !m[0].startsWith("docs/")) continue;
			if (!known.get(doc)?.has(anchor)) broken.push(`${path.relative(ROOT, file)}: ${doc}#${anchor}`);
		}
	}
	expect(broken).toEqual([]);
});
