// Runs every benchmark in turn, each in its own Node process (so one's heap, JIT state and page
// cache churn do not colour the next), passing --quick through. `npm run bench` calls this.
// Exit status: 0 when every benchmark ran to the end, else the first non-zero status.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = [
  'hash.ts',
  'build-graph.ts',
  'floor.ts',
  'durability.ts',
  'config-load.ts',
  'data-half.ts',
  'calibration.ts',
  'scoring.ts',
  'evaluation.ts',
  'train.ts',
  'remote-cache.ts',
  'remote-cache-dev.ts',
];
const passThrough = process.argv.slice(2).filter((a) => a === '--quick');

let status = 0;
for (const [i, file] of BENCHMARKS.entries()) {
  if (i > 0) console.log('');
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(new URL(file, import.meta.url)), ...passThrough],
    {
      stdio: 'inherit',
    },
  );
  const code = r.error ? 1 : (r.status ?? 1);
  if (r.error) console.error(`bench/${file}: ${r.error.message}`);
  else if (code !== 0) console.error(`bench/${file} exited ${r.status ?? r.signal}`);
  if (status === 0) status = code;
}
process.exitCode = status;
