/** The bench's per-process accounts (test/support/cpu.ts): syscalls counted from /proc, harness left out of a deployment's cost. */
import fs from "fs";
import os from "os";
import path from "path";
import { addCpuSamples, cpuAccount, cpuShares, deploymentCost, syscalls, syscallsPerEvent, type CpuSample } from "../../support/cpu";

it("counts this process's read and write syscalls, and none for a process that is gone", () => {
	const file = path.join(os.tmpdir(), `bench-cpu-${process.pid}`);
	const before = syscalls(process.pid)!;
	for (let i = 0; i < 50; i++) fs.writeFileSync(file, "x");
	fs.rmSync(file);
	expect(syscalls(process.pid)! - before).toBeGreaterThanOrEqual(50);
	expect(syscalls(2 ** 22 + 1)).toBeNull();
	expect(syscalls(undefined)).toBeNull();
});

it("keeps what each process used between start and stop", () => {
	const account = cpuAccount({ me: process.pid, gone: 2 ** 22 + 1 });
	const file = path.join(os.tmpdir(), `bench-cpu-account-${process.pid}`);
	for (let i = 0; i < 20; i++) fs.writeFileSync(file, "x");
	fs.rmSync(file);
	const sample = account.stop();
	expect(Object.keys(sample.syscallsByProcess)).toEqual(["me"]);
	expect(sample.syscallsByProcess.me).toBeGreaterThanOrEqual(20);
});

it("adds windows up, and leaves the load generator and the peers out of a deployment's cost", () => {
	const window = (api: number, loadGenerator: number): CpuSample => ({
		byProcess: { api, nats: 10, loadGenerator, peers: 5 },
		syscallsByProcess: { api: api * 2, nats: 20, loadGenerator: loadGenerator * 2, peers: 10 },
		wallMs: 1000,
		availableMs: 2000,
	});
	const both = addCpuSamples([window(100, 50), window(300, 70)]);
	expect(both.syscallsByProcess).toEqual({ api: 800, nats: 40, loadGenerator: 240, peers: 20 });
	expect(deploymentCost(both)).toEqual({ cpuMs: 420, syscalls: 840 });
	expect(syscallsPerEvent(both, 80)).toEqual({
		syscallsApiPerEvent: 10,
		syscallsNatsPerEvent: 0.5,
		syscallsLoadGeneratorPerEvent: 3,
		syscallsPeersPerEvent: 0.3,
	});
	expect(cpuShares(both)).toEqual({ cpuApiPct: 20, cpuNatsPct: 1, cpuLoadGeneratorPct: 6, cpuPeersPct: 0.5 });
});
