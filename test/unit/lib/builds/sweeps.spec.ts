import { sweepEvery } from "../../../../lib/builds/sweeps";

const MINUTE = 60_000;

afterEach(() => {
	jest.useRealTimers();
});

/** Lets the promise callbacks of a sweep run (fake timers leave microtasks alone). */
async function settle(): Promise<void> {
	for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe("sweepEvery", () => {
	it("sweeps every everyMs, reports what a sweep did, and stops", async () => {
		jest.useFakeTimers();
		const sweepStaleUploads = jest.fn<Promise<number>, [number]>().mockResolvedValueOnce(0).mockResolvedValueOnce(2);
		const onSwept = jest.fn();
		const stop = sweepEvery(() => sweepStaleUploads(60 * MINUTE), { everyMs: 15 * MINUTE, onSwept, onError: jest.fn() });
		jest.advanceTimersByTime(15 * MINUTE - 1);
		expect(sweepStaleUploads).not.toHaveBeenCalled();
		jest.advanceTimersByTime(1);
		await settle();
		expect(sweepStaleUploads.mock.calls).toEqual([[60 * MINUTE]]);
		expect(onSwept).not.toHaveBeenCalled();
		jest.advanceTimersByTime(15 * MINUTE);
		await settle();
		expect(sweepStaleUploads).toHaveBeenCalledTimes(2);
		expect(onSwept.mock.calls).toEqual([[2]]);
		stop();
		jest.advanceTimersByTime(60 * MINUTE);
		expect(sweepStaleUploads).toHaveBeenCalledTimes(2);
	});

	it("runs one sweep at a time, and goes on after a failed one", async () => {
		jest.useFakeTimers();
		let finish!: (removed: number) => void;
		const sweepStaleUploads = jest
			.fn<Promise<number>, [number]>()
			.mockImplementationOnce(() => new Promise(resolve => (finish = resolve)))
			.mockRejectedValueOnce(new Error("EACCES"))
			.mockResolvedValue(1);
		const onSwept = jest.fn();
		const onError = jest.fn();
		const stop = sweepEvery(() => sweepStaleUploads(10 * MINUTE), { everyMs: MINUTE, onSwept, onError });
		jest.advanceTimersByTime(3 * MINUTE);
		expect(sweepStaleUploads).toHaveBeenCalledTimes(1);
		finish(0);
		await settle();
		jest.advanceTimersByTime(MINUTE);
		await settle();
		expect(onError.mock.calls).toEqual([[new Error("EACCES")]]);
		jest.advanceTimersByTime(MINUTE);
		await settle();
		expect(sweepStaleUploads).toHaveBeenCalledTimes(3);
		expect(onSwept.mock.calls).toEqual([[1]]);
		stop();
	});
});
