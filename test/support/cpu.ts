/**
 * CPU time of processes (Linux /proc), to tell where a benchmark's time went: which process of a
 * stack (gateway, workers, peers, the load generator itself, NATS, Redis) was busy during a
 * measured phase. On a machine whose cores every process shares, the busiest one is the limit.
 */
import fs from "fs";
import os from "os";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU milliseconds a process has used so far, or null when it is gone. */
export function cpuMs(pid: number | undefined): number | null {
	if (!pid) return null;
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		// The command name (field 2) may hold spaces: count fields after its closing parenthesis.
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
	} catch {
		return null;
	}
}

/** Read and write syscalls (of any file: sockets, pipes, files) a process has made so far (/proc/<pid>/io), or null. */
export function syscalls(pid: number | undefined): number | null {
	if (!pid) return null;
	try {
		const io = fs.readFileSync(`/proc/${pid}/io`, "utf8");
		const count = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1] ?? NaN);
		const total = count("syscr") + count("syscw");
		return Number.isFinite(total) ? total : null;
	} catch {
		return null;
	}
}

/** The pid of every process whose command line contains `needle` (e.g. `nats-server`), or []. */
function pidsOf(needle: string): number[] {
	const out: number[] = [];
	for (const entry of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
			if (cmd.includes(needle)) out.push(Number(entry));
		} catch {
			// gone meanwhile
		}
	}
	return out;
}

/** The inodes of the TCP sockets listening on `port` (/proc/net/tcp and tcp6: local address HEX:PORT, state 0A). */
function listeningInodes(port: number): Set<string> {
	const inodes = new Set<string>();
	for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
		let lines: string[];
		try {
			lines = fs.readFileSync(table, "utf8").split("\n").slice(1);
		} catch {
			continue;
		}
		for (const line of lines) {
			const f = line.trim().split(/\s+/);
			if (f.length > 9 && f[3] === "0A" && parseInt(f[1].split(":")[1], 16) === port) inodes.add(f[9]);
		}
	}
	return inodes;
}

/**
 * The `needle` process (`nats-server`) that listens on `url`'s port: the machine may run others
 * (a test run starts its own NATS and Redis), and their syscalls are not the deployment's.
 */
export function serverPid(needle: string, url: string): number | undefined {
	const inodes = listeningInodes(Number(new URL(url).port));
	return pidsOf(needle).find(pid => {
		try {
			return fs.readdirSync(`/proc/${pid}/fd`).some(fd => {
				const target = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
				return target !== null && inodes.has(target[1]);
			});
		} catch {
			return false; // gone meanwhile, or not ours to read
		}
	});
}

/** CPU ms the whole machine spent idle so far (all cores, /proc/stat), or null where that is not readable. */
function machineIdleMs(): number | null {
	try {
		const fields = fs.readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/);
		// cpu user nice system idle iowait …: idle and iowait are time no process ran.
		return ((Number(fields[4]) + Number(fields[5])) * 1000) / TICKS_PER_SECOND;
	} catch {
		return null;
	}
}

export interface CpuSample {
	/** Name → CPU ms used between start and stop. */
	byProcess: Record<string, number>;
	/** Name → read and write syscalls made between start and stop (where /proc tells). */
	syscallsByProcess: Record<string, number>;
	/** CPU ms no process used meanwhile (all cores), when the machine tells. */
	idleMs?: number;
	/** Wall-clock ms between start and stop. */
	wallMs: number;
	/** Cores' worth of time the machine had in that window (wall × cores). */
	availableMs: number;
}

/** Starts a CPU account of named processes; `stop()` returns what each used meanwhile. */
export function cpuAccount(processes: Record<string, number | undefined>): { stop(): CpuSample } {
	const read = (counter: (pid: number | undefined) => number | null) =>
		Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, counter(pid)]));
	const since = (start: Record<string, number | null>, counter: (pid: number | undefined) => number | null) => {
		const used: Record<string, number> = {};
		for (const [name, pid] of Object.entries(processes)) {
			const before = start[name];
			const after = counter(pid);
			if (before !== null && after !== null) used[name] = after - before;
		}
		return used;
	};
	const cpuAtStart = read(cpuMs);
	const syscallsAtStart = read(syscalls);
	const idleAtStart = machineIdleMs();
	const t0 = Date.now();
	return {
		stop() {
			const wallMs = Date.now() - t0;
			const byProcess = since(cpuAtStart, cpuMs);
			const syscallsByProcess = since(syscallsAtStart, syscalls);
			const idleNow = machineIdleMs();
			const idleMs = idleAtStart !== null && idleNow !== null ? idleNow - idleAtStart : undefined;
			return { byProcess, syscallsByProcess, idleMs, wallMs, availableMs: wallMs * os.cpus().length };
		},
	};
}

/** Windows of the same account taken in turns with others, added up. */
export function addCpuSamples(samples: CpuSample[]): CpuSample {
	const add = (pick: (s: CpuSample) => Record<string, number>) => {
		const sum: Record<string, number> = {};
		for (const s of samples) for (const [name, n] of Object.entries(pick(s))) sum[name] = (sum[name] ?? 0) + n;
		return sum;
	};
	const idle = samples.every(s => s.idleMs !== undefined) ? samples.reduce((t, s) => t + s.idleMs!, 0) : undefined;
	return {
		byProcess: add(s => s.byProcess),
		syscallsByProcess: add(s => s.syscallsByProcess),
		...(idle === undefined ? {} : { idleMs: idle }),
		wallMs: samples.reduce((t, s) => t + s.wallMs, 0),
		availableMs: samples.reduce((t, s) => t + s.availableMs, 0),
	};
}

/** A process's field in a row's `extra`: `cpu` + `api` + `Pct` → `cpuApiPct`. */
const field = (prefix: string, name: string, suffix: string) => `${prefix}${name[0].toUpperCase()}${name.slice(1)}${suffix}`;

/**
 * `{cpu<Name>Pct: …}`: each process's share of one core over the window, for a row's `extra`, and
 * `cpuIdlePct`, the time no process ran, in the same unit (so all of them add up to the cores × 100).
 */
export function cpuShares(sample: CpuSample): Record<string, number> {
	const out: Record<string, number> = {};
	const pct = (ms: number) => Math.round((1000 * ms) / Math.max(1, sample.wallMs)) / 10;
	for (const [name, ms] of Object.entries(sample.byProcess)) out[field("cpu", name, "Pct")] = pct(ms);
	if (sample.idleMs !== undefined) out.cpuIdlePct = pct(sample.idleMs);
	return out;
}

/** `{syscalls<Name>PerEvent: …}`: each process's read and write syscalls per event, for a row's `extra` (where a write per event goes). */
export function syscallsPerEvent(sample: CpuSample, events: number): Record<string, number> {
	const out: Record<string, number> = {};
	for (const [name, n] of Object.entries(sample.syscallsByProcess))
		out[field("syscalls", name, "PerEvent")] = Math.round((10 * n) / Math.max(1, events)) / 10;
	return out;
}

/**
 * What a deployment spent on a piece of work, every process but the harness's own (the load
 * generator, the peers): its CPU ms and its read and write syscalls, the latter a count that does
 * not depend on how fast or busy the machine is.
 */
export function deploymentCost(sample: CpuSample, harness: string[] = ["loadGenerator", "peers"]): { cpuMs: number; syscalls: number } {
	const total = (counts: Record<string, number>) =>
		Object.entries(counts)
			.filter(([name]) => !harness.includes(name))
			.reduce((t, [, n]) => t + n, 0);
	return { cpuMs: total(sample.byProcess), syscalls: total(sample.syscallsByProcess) };
}
