/**
 * Bursts of the writes the embedded store holds (labels, deploy keys, snippets, builds) against a
 * running service, with every write that was answered 2xx recorded; and a project's lists walked
 * page by page as a client does, to check them against what was answered.
 */
import crypto from "crypto";
import type { Client } from "./http";
import { internalApi } from "./builds";
import { ed25519Line } from "./ssh-keys";

export const KINDS = ["labels", "keys", "snippets", "builds"] as const;
export type Kind = (typeof KINDS)[number];

/** What was answered 2xx, by kind: label names, and the ids of the others. */
export type Answered = Record<Kind, Set<string | number>>;

export const noneAnswered = (): Answered => ({ labels: new Set(), keys: new Set(), snippets: new Set(), builds: new Set() });

export interface Target {
	api: Client;
	/** The gateway's base URL and the internal API's shared secret (builds). */
	url: string;
	internalSecret: string;
	projectId: number;
}

/**
 * One write of a kind, marked with `tag` (in the label's name, the key's, snippet's and build's
 * title or name): the answered name or id, or null when it was not answered 2xx.
 */
export async function writeOne(t: Target, kind: Kind, tag = crypto.randomUUID().slice(0, 12)): Promise<string | number | null> {
	const path = `/projects/${t.projectId}/${kind}`;
	switch (kind) {
		case "labels": {
			const res = await t.api.post(path, { body: { name: `l-${tag}`, color: "#428BCA" } });
			return res.status === 200 ? (res.body as { name: string }).name : null;
		}
		case "keys": {
			const res = await t.api.post(path, { body: { title: `k-${tag}`, key: ed25519Line(`k-${tag}`) } });
			return res.status === 201 ? (res.body as { id: number }).id : null;
		}
		case "snippets": {
			const res = await t.api.post(path, { body: { title: `s-${tag}`, file_name: "a.txt", code: tag, visibility_level: 0 } });
			return res.status === 201 ? (res.body as { id: number }).id : null;
		}
		case "builds": {
			const res = await internalApi(t.url, t.internalSecret).create({ project_id: t.projectId, name: `b-${tag}` });
			return res.status === 201 ? (res.body as { id: number }).id : null;
		}
	}
}

export interface Burst {
	/** Writes answered 2xx in this burst, and writes sent that were not (cut by a kill, refused). */
	readonly answered: number;
	readonly unanswered: number;
	stop(): Promise<void>;
}

/** `perKind` clients per kind writing in a loop until stopped, adding what was answered to `into`. */
export function startBurst(t: Target, into: Answered, perKind = 2): Burst {
	let running = true;
	let answered = 0;
	let unanswered = 0;
	const loops = KINDS.flatMap(kind =>
		Array.from({ length: perKind }, async () => {
			while (running) {
				const got = await writeOne(t, kind).catch(() => null);
				if (got === null) {
					unanswered++;
					await new Promise(r => setTimeout(r, 20));
				} else {
					into[kind].add(got);
					answered++;
				}
			}
		}),
	);
	return {
		get answered() {
			return answered;
		},
		get unanswered() {
			return unanswered;
		},
		stop: async () => {
			running = false;
			await Promise.all(loops);
		},
	};
}

export interface Walked {
	total: number;
	pages: number;
	/** How many items each page held. */
	sizes: number[];
	/** Label names, or the ids of the others, in the order listed. */
	items: (string | number)[];
}

/** Every page of a project's list of a kind, as a client walks them with X-Total and X-Total-Pages. */
export async function walkPages(t: Target, kind: Kind, perPage = 20): Promise<Walked> {
	const get = (page: number) => t.api.get(`/projects/${t.projectId}/${kind}`, { query: { per_page: perPage, page } });
	const first = await get(1);
	if (first.status !== 200) throw new Error(`GET ${kind}: ${first.status} ${first.text}`);
	const total = Number(first.headers.get("x-total"));
	const pages = Number(first.headers.get("x-total-pages"));
	const walked: Walked = { total, pages, sizes: [], items: [] };
	for (let page = 1; page <= pages; page++) {
		const res = page === 1 ? first : await get(page);
		if (res.status !== 200) throw new Error(`GET ${kind} page ${page}: ${res.status} ${res.text}`);
		const rows = res.body as { id: number; name?: string }[];
		walked.sizes.push(rows.length);
		walked.items.push(...rows.map(r => (kind === "labels" ? r.name! : r.id)));
	}
	return walked;
}

/** The page sizes an exact list of `total` items has. */
export const exactSizes = (total: number, perPage = 20) => Array.from({ length: Math.ceil(total / perPage) }, (_, i) => Math.min(perPage, total - i * perPage));
