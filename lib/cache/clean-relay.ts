/**
 * Cleans a node's Redis missed, done by one gateway whose Redis works: the node sends them as one
 * balanced event to CLEAN_RELAY_GROUP; the gateway cleans after a new write-generation epoch and
 * reads the named entries as misses meanwhile. Events are bounded and checked (MAX_RELAYED_*).
 * Why the gateway, and what is never relayed: docs/architecture.md#cache-relay.
 */
import type { Context, Logger, ServiceBroker, ServiceSchema } from "moleculer";

export const CLEAN_RELAY_EVENT = "cache.cleanMissed";
/** The gateway service's name, and so its event group. */
export const CLEAN_RELAY_GROUP = "api";
/** A write cleans two patterns of one project; a membership change deletes four keys. */
export const MAX_RELAYED_PATTERNS = 16;
export const MAX_RELAYED_KEYS = 64;
/** Cache keys end in a hash past 256 characters of parameters (MAX_CACHE_KEY_PARAMS), so this is ample. */
export const MAX_RELAYED_LENGTH = 1024;
/** Runs of `*` in a pattern: ours have at most two; Redis' glob match slows with many. */
export const MAX_PATTERN_WILDCARDS = 8;
/** An emit waits on NATS only; bounded all the same, as every cache command is. */
const SEND_TIMEOUT_MS = 500;

/** What CLEAN_RELAY_EVENT carries: patterns to clean, exact keys to delete (unprefixed, as the cacher takes them). */
export interface RelayedClean {
	patterns: string[];
	keys: string[];
}

/** A service's name, then a dot: every cache key starts so, and a pattern that does cannot match the whole cache. */
const NAMED = /^[A-Za-z][\w-]*\./;

function problem(item: unknown, pattern: boolean): string | null {
	if (typeof item !== "string") return "not a string";
	if (item.length > MAX_RELAYED_LENGTH) return `longer than ${MAX_RELAYED_LENGTH} characters`;
	if (!NAMED.test(item)) return "does not start with a service's name";
	if (pattern && (item.match(/\*+/g)?.length ?? 0) > MAX_PATTERN_WILDCARDS) return `more than ${MAX_PATTERN_WILDCARDS} wildcards`;
	return null;
}

function checkList(payload: Record<string, unknown>, field: keyof RelayedClean, max: number): string[] | string {
	const list = payload[field];
	if (list === undefined) return [];
	if (!Array.isArray(list)) return `${field}: not a list`;
	if (list.length > max) return `${field}: more than ${max}`;
	for (let i = 0; i < list.length; i++) {
		const why = problem(list[i], field === "patterns");
		if (why) return `${field}[${i}]: ${why}`;
	}
	return list as string[];
}

/** The patterns and keys a received event names, or why it is ignored (never echoing what it carried). */
export function relayedTargets(payload: unknown): RelayedClean | string {
	if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return "not an object";
	const record = payload as Record<string, unknown>;
	const extra = Object.keys(record).find(k => k !== "patterns" && k !== "keys");
	if (extra !== undefined) return "unknown fields";
	const patterns = checkList(record, "patterns", MAX_RELAYED_PATTERNS);
	if (typeof patterns === "string") return patterns;
	const keys = checkList(record, "keys", MAX_RELAYED_KEYS);
	if (typeof keys === "string") return keys;
	if (patterns.length + keys.length === 0) return "names nothing";
	return { patterns, keys };
}

/** The events that carry these patterns and keys, within the bounds (what no receiver would take is left out). */
export function relayBatches(patterns: string[], keys: string[]): RelayedClean[] {
	const p = patterns.filter(x => problem(x, true) === null);
	const k = keys.filter(x => problem(x, false) === null);
	const batches: RelayedClean[] = [];
	for (let i = 0; i * MAX_RELAYED_PATTERNS < p.length || i * MAX_RELAYED_KEYS < k.length; i++)
		batches.push({
			patterns: p.slice(i * MAX_RELAYED_PATTERNS, (i + 1) * MAX_RELAYED_PATTERNS),
			keys: k.slice(i * MAX_RELAYED_KEYS, (i + 1) * MAX_RELAYED_KEYS),
		});
	return batches;
}

/** Redis' glob match for `*` (any run, `**` alike) and `?` (one character); in time bounded by the product of the lengths. */
export function globMatches(pattern: string, text: string): boolean {
	let p = 0;
	let t = 0;
	let star = -1;
	let mark = 0;
	while (t < text.length) {
		if (p < pattern.length && (pattern[p] === "?" || (pattern[p] !== "*" && pattern[p] === text[t]))) {
			p++;
			t++;
		} else if (p < pattern.length && pattern[p] === "*") {
			star = p++;
			mark = t;
		} else if (star !== -1) {
			p = star + 1;
			t = ++mark;
		} else return false;
	}
	while (pattern[p] === "*") p++;
	return p === pattern.length;
}

type CleanHere = (patterns: string[], keys: string[]) => Promise<void>;

export class CleanRelay {
	private readonly logger: Logger;
	/** Cleans this node is doing for others, under way. */
	private readonly underWay = new Set<RelayedClean>();
	private cleanHere: CleanHere | null = null;

	constructor(private readonly broker: ServiceBroker) {
		this.logger = broker.getLogger("cache");
	}

	/** How this node cleans for another: through its resilient cacher, after a new epoch, never relayed again. */
	servedBy(cleanHere: CleanHere): this {
		this.cleanHere = cleanHere;
		return this;
	}

	/** Hands a clean this node missed to one gateway; never rejects. */
	async send(patterns: string[], keys: string[]): Promise<void> {
		if (!this.broker.transit || this.broker.getLocalService(CLEAN_RELAY_GROUP)) return;
		for (const batch of relayBatches(patterns, keys)) {
			let timer: NodeJS.Timeout | undefined;
			const late = new Promise<void>(resolve => (timer = setTimeout(resolve, SEND_TIMEOUT_MS)));
			await Promise.race([this.broker.emit(CLEAN_RELAY_EVENT, batch, { groups: [CLEAN_RELAY_GROUP] }).catch(() => undefined), late]);
			clearTimeout(timer);
		}
	}

	/** Whether a clean this node does for another is under way and names this entry (it is then read as a miss). */
	hides(key: string): boolean {
		if (this.underWay.size === 0) return false;
		for (const t of this.underWay) if (t.keys.includes(key) || t.patterns.some(p => globMatches(p, key))) return true;
		return false;
	}

	/** Does (or remembers) a clean another node missed; a malformed event is ignored with a warning. */
	async receive(payload: unknown, sender: string | null | undefined): Promise<void> {
		const targets = relayedTargets(payload);
		if (typeof targets === "string" || !this.cleanHere) {
			this.logger.warn(`Ignored a cache clean relayed by node ${String(sender)}: ${typeof targets === "string" ? targets : "no cache to clean"}`);
			return;
		}
		this.underWay.add(targets);
		try {
			await this.cleanHere(targets.patterns, targets.keys);
		} catch (err) {
			this.logger.warn(`A cache clean relayed by node ${String(sender)} failed: ${(err as Error).message}`);
		} finally {
			this.underWay.delete(targets);
		}
	}

	/** Subscribes the gateway's service (by its schema, as it is created) to the relayed cleans. */
	subscribe(schema: ServiceSchema): void {
		if (schema.name !== CLEAN_RELAY_GROUP) return;
		const handler = (ctx: Context) => this.receive(ctx.params, ctx.nodeID);
		schema.events = { ...schema.events, [CLEAN_RELAY_EVENT]: { group: CLEAN_RELAY_GROUP, handler } };
	}
}
