/** The store as data, to prove that a request changed nothing (or something). */
import crypto from "crypto";
import fs from "fs";
import path from "path";

/**
 * The data in DATA_DIR as a digest of its meaning: NeDB files replayed (the last line per `_id`
 * wins, deletions drop it), so that compaction, which rewrites the files, does not count as a
 * change; other files by path, size and content. Id counters (a refused duplicate may burn an id,
 * which is never reused and never shown) and the mail spool (written later by workers for events
 * accepted earlier) are left out.
 */
export function storeDigest(dataDir: string): string {
	const hash = crypto.createHash("sha256");
	const walk = (dir: string) => {
		if (!fs.existsSync(dir)) return;
		for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
			const abs = path.join(dir, entry.name);
			const rel = path.relative(dataDir, abs);
			if (entry.isDirectory()) {
				if (rel !== "mail") walk(abs);
				continue;
			}
			if (entry.name.endsWith(".counters.db")) continue;
			if (entry.name.endsWith(".db")) {
				const docs = new Map<string, string>();
				for (const line of fs.readFileSync(abs, "utf8").split("\n")) {
					if (!line.trim()) continue;
					let doc: any;
					try {
						doc = JSON.parse(line);
					} catch {
						continue; // a line being appended right now; the next digest sees it whole
					}
					if (doc.$$indexCreated || doc.$$indexRemoved) continue;
					if (doc.$$deleted) docs.delete(doc._id);
					else docs.set(doc._id, line);
				}
				hash.update(
					`${rel}\n${[...docs.entries()]
						.sort(([a], [b]) => a.localeCompare(b))
						.map(([, l]) => l)
						.join("\n")}\n`,
				);
			} else {
				hash.update(`${rel}\n`).update(fs.readFileSync(abs)).update("\n");
			}
		}
	};
	walk(dataDir);
	return hash.digest("hex");
}
