/**
 * With CANON_TIMINGS set, a timer that prints how long each phase took to stderr, as
 * `<prefix>: <phase> <ms> ms (CPU <ms> ms)` (read by the benchmarks; the CPU time is the
 * process's, every thread's, user and system); otherwise a no-op.
 */
export function phaseTimer(prefix = "canon"): (name: string) => void {
  if (!process.env.CANON_TIMINGS) return () => {};
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  return (name) => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    process.stderr.write(`${prefix}: ${name} ${(now - last).toFixed(0)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms)\n`);
    last = now;
    lastCpu = process.cpuUsage();
  };
}
