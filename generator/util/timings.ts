/**
 * With CANON_TIMINGS set, a timer that prints how long each phase took to stderr, as
 * `<prefix>: <phase> <ms> ms` (read by the benchmarks); otherwise a no-op.
 */
export function phaseTimer(prefix = "canon"): (name: string) => void {
  if (!process.env.CANON_TIMINGS) return () => {};
  let last = performance.now();
  return (name) => {
    const now = performance.now();
    process.stderr.write(`${prefix}: ${name} ${(now - last).toFixed(0)} ms\n`);
    last = now;
  };
}
