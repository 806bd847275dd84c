// Plain JavaScript, so that loading it costs the measured process next to nothing.
// Preloaded (`node --import`) into a measured child process: at exit, writes to
// $CANON_BENCH_RSS_FILE the peak resident set size of the whole process (every thread) in KiB
// and the CPU time it used (user + system, every thread) in microseconds.
import { writeFileSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

const file = process.env.CANON_BENCH_RSS_FILE;
if (file && isMainThread) {
  process.on("exit", () => {
    try {
      const usage = process.resourceUsage();
      writeFileSync(
        file,
        JSON.stringify({ maxRSS: usage.maxRSS, cpu: usage.userCPUTime + usage.systemCPUTime }),
      );
    } catch {
      // Measuring must never change the outcome of the run.
    }
  });
}
