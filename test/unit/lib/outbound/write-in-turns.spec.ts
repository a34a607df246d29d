/** Writes of one turn of the event loop in one syscall; the next turn's in another; nothing held back. */
import net from "net";
import { writeInTurns } from "../../../../lib/outbound/write-in-turns";

let server: net.Server;
let received: Buffer[] = [];
let closed: Promise<void>;

beforeEach(async () => {
	received = [];
	let done = () => undefined as void;
	closed = new Promise(resolve => (done = resolve));
	server = net.createServer(s => {
		s.on("data", chunk => received.push(chunk));
		s.on("end", done);
	});
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
});

afterEach(async () => {
	await new Promise(resolve => server.close(resolve));
});

const connected = async () => {
	const socket = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
	await new Promise(resolve => socket.once("connect", resolve));
	return writeInTurns(socket);
};
const turn = () => new Promise(resolve => setImmediate(resolve));

it("sends what one turn wrote in one write, and the next turn's in another", async () => {
	const socket = await connected();
	const sent = [jest.spyOn(socket, "_write"), jest.spyOn(socket, "_writev")];
	socket.write("a\r\n");
	await Promise.resolve();
	socket.write("b\r\n");
	process.nextTick(() => socket.write("c\r\n"));
	await turn();
	socket.write("d\r\n");
	await turn();
	expect(sent.map(s => s.mock.calls.length)).toEqual([1, 1]);
	socket.end("e\r\n");
	await closed;
	expect(Buffer.concat(received).toString()).toBe("a\r\nb\r\nc\r\nd\r\ne\r\n");
});
