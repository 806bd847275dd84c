// HAProxy from Debian in front of the instances of the cluster test: its configuration written
// to a folder of the test, started in the foreground (`-db`) and stopped by its PID. Round
// robin per request (the server side of each connection is closed after its response, so no
// request sticks to the server of the one before), an HTTP health check on
// `/v2/ready` (every path carries a version prefix; 200 while the store answers), retries with redispatch when a
// server refuses the connection, and an `X-Served-By` header naming the server of each answer.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import path from "node:path";

export const HAPROXY = process.env.CANON_HAPROXY ?? "/usr/sbin/haproxy";

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

export interface Backend {
  /** The server's name in HAProxy, sent back in `X-Served-By`. */
  name: string;
  port: number;
}

export interface Balancer {
  process: ChildProcess;
  base: string;
  /** The stats socket, for `show stat`. */
  socket: string;
  output: () => string;
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** What HAProxy answers, with 503, when no instance is ready: the error envelope of `/vN/ready`. */
export const NO_INSTANCE_BODY = JSON.stringify({ error: { code: "SERVICE_UNAVAILABLE", message: "The service is not ready. Retry later." } });

/**
 * What HAProxy answers, with 502 or 504, when the instance it chose failed before answering
 * (killed mid-request, or silent past `timeout server`): the 500 envelope of the service.
 */
export const NO_ANSWER_BODY = JSON.stringify({ error: { code: "INTERNAL_ERROR", message: "Something went wrong." } });

/** `serverTimeout`: HAProxy's `timeout server` (a test of a silent instance makes it short). */
export function config(port: number, socket: string, backends: Backend[], serverTimeout = "120s"): string {
  return [
    "global",
    `  stats socket ${socket} mode 600 level admin`,
    "  maxconn 512",
    "defaults",
    "  mode http",
    // One line per request on HAProxy's stderr (with the termination state), shown when a step fails.
    "  log stderr format raw local0",
    "  option httplog",
    "  timeout connect 2s",
    "  timeout client 120s",
    `  timeout server ${serverTimeout}`,
    "  timeout check 5s",
    // A server that refuses the connection (a killed instance, before its check fails) is
    // retried, on another server: the request was never sent, so even a POST may be.
    "  retries 3",
    "  option redispatch 1",
    // The client's address, for the rate limit of requests without credentials.
    "  option forwardfor",
    "frontend canon",
    `  bind 127.0.0.1:${port}`,
    "  default_backend instances",
    "backend instances",
    "  balance roundrobin",
    // No server connection outlives its response: each request is balanced on its own.
    "  option http-server-close",
    "  http-reuse never",
    // No instance ready (the database down for all): the service's own envelope and Retry-After,
    // not HAProxy's HTML page (docs/scaling.md).
    `  http-error status 503 content-type "application/json; charset=utf-8" string ${JSON.stringify(NO_INSTANCE_BODY)} hdr Retry-After 5 hdr X-Content-Type-Options nosniff`,
    // The instance failed before answering (502), or said nothing for `timeout server` (504): the
    // 500 envelope, not HTML. The typed client sends a GET or a keyed POST again after a 502.
    `  http-error status 502 content-type "application/json; charset=utf-8" string ${JSON.stringify(NO_ANSWER_BODY)} hdr X-Content-Type-Options nosniff`,
    `  http-error status 504 content-type "application/json; charset=utf-8" string ${JSON.stringify(NO_ANSWER_BODY)} hdr X-Content-Type-Options nosniff`,
    "  option httpchk",
    "  http-check send meth GET uri /v2/ready",
    "  http-check expect status 200",
    "  http-response set-header X-Served-By %s",
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check inter 300ms fall 3 rise 1`),
    "",
  ].join("\n");
}

/** Starts HAProxy over the backends on a free port; resolves once every backend's check passes. */
export async function startBalancer(dir: string, backends: Backend[]): Promise<Balancer> {
  if (!existsSync(HAPROXY)) throw new Error(`${HAPROXY} is missing: install Debian's haproxy (apt-get install haproxy; .ci/run does)`);
  const socket = path.join(dir, "haproxy.sock");
  let lastError: unknown;
  // The free port may be taken between finding it and binding it: try another.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const file = path.join(dir, "haproxy.cfg");
    writeFileSync(file, config(port, socket, backends));
    const child = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    const balancer: Balancer = { process: child, base: `http://127.0.0.1:${port}`, socket, output: () => output };
    try {
      await waitUntil(async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`haproxy exited (${child.exitCode ?? child.signalCode}):\n${output}`);
        const up = (await serverStats(balancer)).filter((s) => s.status === "UP").map((s) => s.name);
        return backends.every((b) => up.includes(b.name));
      }, 60_000, () => `haproxy did not see every instance up:\n${output}`);
      return balancer;
    } catch (error) {
      lastError = error;
      await stopBalancer(balancer);
    }
  }
  throw lastError;
}

export function stopBalancer(balancer: Balancer): Promise<void> {
  return new Promise((resolve) => {
    const child = balancer.process;
    running.delete(child);
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export interface ServerStat {
  name: string;
  /** UP, DOWN, MAINT, … */
  status: string;
  /** Requests HAProxy sent to this server so far. */
  requests: number;
}

/** `show stat` on the stats socket: every server of the backend. */
export async function serverStats(balancer: Balancer): Promise<ServerStat[]> {
  const text = await socketCommand(balancer.socket, "show stat");
  const [header, ...rows] = text.split("\n").filter((line) => line.trim() !== "");
  if (!header) return [];
  const columns = header.replace(/^# /, "").split(",");
  const at = (row: string[], column: string) => row[columns.indexOf(column)] ?? "";
  return rows
    .map((line) => line.split(","))
    .filter((row) => at(row, "pxname") === "instances" && !["FRONTEND", "BACKEND"].includes(at(row, "svname")))
    .map((row) => ({ name: at(row, "svname"), status: at(row, "status"), requests: Number(at(row, "stot")) }));
}

function socketCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!existsSync(socket)) return resolve("");
    const connection = connect(socket);
    let text = "";
    connection.on("data", (d) => (text += d.toString()));
    connection.on("error", reject);
    connection.on("end", () => resolve(text));
    connection.write(`${command}\n`);
  });
}

/** Polls `ready` every 100 ms until it is true; rejects after `timeoutMs` with `message()`. */
export async function waitUntil(ready: () => Promise<boolean>, timeoutMs: number, message: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await ready()) return;
    } catch (error) {
      if ((error as Error).message.startsWith("haproxy exited")) throw error;
    }
    if (Date.now() > until) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
