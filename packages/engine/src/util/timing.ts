// Phase timings for performance work: RC1_DEBUG=timing prints how long each phase of a command
// took, to stderr (like ninja -d stats). Costs nothing when off.
const on = process.env.RC1_DEBUG?.split(',').includes('timing') ?? false;
let last = performance.now();

export function phase(name: string): void {
  if (!on) return;
  const now = performance.now();
  process.stderr.write(
    `rc1 timing: ${name.padEnd(24)} ${(now - last).toFixed(1).padStart(7)} ms (at ${now.toFixed(1)} ms)\n`,
  );
  last = now;
}

/** A duration as the build's lines print it: `37ms`, `1.25s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(2)}s`;
}
