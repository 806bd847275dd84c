import { Option } from "commander";

/**
 * The options of a running service, one table for `serve` and `dev` (`dev` is `serve` that
 * watches the definitions): an option added here is taken by both, with the same meaning, and
 * read by serve.ts's `serviceSettings` for both. Only commander is loaded with it, so
 * `canon --help` stays as quick as before.
 */
export function servingOptions(): Option[] {
  return [
    new Option("--port <port>", "port to listen on").default("3000"),
    new Option("--host <host>", "address to listen on").default("127.0.0.1"),
    new Option("--store <store>", "memory, pglite:<dir> or postgres://… (default: $CANON_STORE, else pglite:.canon-data)"),
    new Option("--auth <module>", "your module exporting authenticate (and optionally authorize, hooks, services), such as ./src/auth.ts"),
    new Option("--dev-credentials", "accept Bearer dev-writer and dev-reader on a host that is not loopback (on loopback they are accepted without it, unless --auth)"),
    new Option("--redis <url>", "share the rate limit of several instances through Redis (redis://host:port)"),
    new Option("--trust-proxy <peers>", "believe X-Forwarded-For from these peers: addresses, ranges, loopback, linklocal, uniquelocal, or none (default: loopback only)"),
    new Option("--cors <origin>", "let browser pages of this origin call the service (repeat for more)")
      .argParser((v: string, all: string[]) => [...all, v])
      .default([]),
    new Option("--sample-data <file>", "write the records of this file through the API when the store is empty (the showcase's npm start: samples/showcase.yaml)"),
    new Option("--log-level <level>", "log on stdout from this level: fatal, error, warn, info (a line per request), debug, trace or silent").default("info"),
  ];
}
