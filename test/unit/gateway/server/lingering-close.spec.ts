/**
 * The lingering close after a refusal (gateway/server/body.ts closeAfterAnswer) on a real HTTP server: a
 * client that keeps one connection open and sends each refused body after its answer keeps the
 * connection, and the socket carries nothing more for it, however many requests it sends.
 */
import http from "http";
import net, { type AddressInfo } from "net";
import { closeAfterAnswer } from "../../../../gateway/server/body";

let server: http.Server;
let serverSocket: net.Socket | null = null;

beforeAll(async () => {
	server = http.createServer((req, res) => {
		res.statusCode = 413;
		res.end("refused");
		// Both the body reader and the error handler ask for it.
		closeAfterAnswer(req, res);
		closeAfterAnswer(req, res);
	});
	server.on("connection", socket => (serverSocket = socket));
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
});

afterAll(() => new Promise(resolve => server.close(resolve)));

it("leaves no listener on a kept-alive socket per refused request whose body came after the answer", async () => {
	const client = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
	await new Promise(resolve => client.once("connect", resolve));
	client.setNoDelay(true);
	let received = "";
	client.on("data", chunk => (received += chunk.toString()));
	/** One request: headers, its answer, then the body it announced; the answer's status. */
	const refused = async () => {
		received = "";
		client.write("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n");
		while (!received.endsWith("refused")) await new Promise(resolve => setTimeout(resolve, 1));
		const status = received.split(" ")[1];
		client.write("abcd");
		return status;
	};
	// Each answer comes after the previous body was read to its end, so its listeners are settled.
	await refused();
	await refused();
	const socket = serverSocket!;
	const after2 = socket.listenerCount("close");
	for (let i = 0; i < 50; i++) expect(await refused()).toBe("413");
	expect(socket.destroyed).toBe(false);
	expect(socket.listenerCount("close")).toBe(after2);
	client.destroy();
});
