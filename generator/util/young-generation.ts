import { setFlagsFromString } from "node:v8";

/**
 * Lets V8's young generation grow in steps of eight instead of two, for a command that runs the
 * pipeline once and exits (`canon generate`, `canon check`). Such a run allocates some 100 MB
 * at N = 100 (the records it reads, the model, the documents), most of which lives until the
 * end: starting from 1 MB semi-spaces and doubling, V8 copies the same survivors through some
 * fifteen scavenges and starts an early mark-compact. Growing faster, it does five or six, and
 * one mark-compact (docs/benchmarks.md, issue 29 point 4). The largest young generation is
 * V8's as before (the peak memory of a cold run at N = 1000 is unchanged); only how soon it
 * gets there changes. The flag has to be set while the process runs: as a command-line flag it
 * would cost a second start of Node (bin/canon.js runs in the process `node` started).
 * Not for `serve` and `dev`, whose process serves requests for its life.
 */
export function youngGenerationForOneRun(): void {
  setFlagsFromString("--semi-space-growth-factor=8");
}
