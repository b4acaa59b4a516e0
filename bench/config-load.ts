// Config loading at 10 000, 20 000 and 40 000 keys: the engine's loader (packages/engine/src/config/load-configs.ts,
// parse + duplicate-key check + merge, no cache) and a cold `rc1-build -n` through the CLI, beside
// the yaml package's own duplicate-key check (`uniqueKeys: true`, what the loader used before: it
// compares each key with every earlier one, so it grows with the square of the key count) and
// `node -e 0`, all measured in the same run. The goal: 40 000 keys load in under a second.
// Run: node scripts/build.mjs && node --import tsx bench/config-load.ts [--quick]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as YAML from 'yaml';
import { loadConfigs } from '../packages/engine/src/config/load-configs.ts';
import { StatCache } from '../packages/engine/src/hash/stat-cache.ts';
import {
  fmtInt,
  fmtMs,
  hasFlag,
  loadNote,
  machineReport,
  runChildOk,
  summarize,
  table,
  timeAsync,
  timeSync,
} from './util.ts';

const QUICK = hasFlag('--quick');
const SIZES = [10_000, 20_000, 40_000];
const RUNS = QUICK ? 1 : 3;
const CLI = resolve(import.meta.dirname, '..', 'packages', 'engine', 'bin', 'rc1-build.js');
const GOAL_MS = 1000;

/** A config of n keys: `big` holds n/10 groups of 10 scalar keys, plus one flat mapping of n/10 keys. */
function configText(n: number): string {
  const lines = ['big:'];
  const groups = n / 20;
  for (let g = 0; g < groups; g++) {
    lines.push(`  g${g}:`);
    for (let k = 0; k < 10; k++) lines.push(`    k${k}: ${g * 10 + k}`);
  }
  lines.push('  flat:');
  for (let k = 0; k < n / 2 - groups; k++) lines.push(`    f${k}: "value ${k}"`);
  return lines.join('\n') + '\n';
}

function workspace(n: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'rc1-bench-config-'));
  mkdirSync(join(dir, 'configs'));
  mkdirSync(join(dir, 'rules'));
  writeFileSync(join(dir, 'configs', 'default.yaml'), configText(n));
  writeFileSync(
    join(dir, 'rules', 'noop.ts'),
    `import { defineRule } from 'rc1-build';\nexport default defineRule({ name: 'noop', version: 1, run() {} });\n`,
  );
  writeFileSync(
    join(dir, 'rc1.build.ts'),
    `import { definePipeline, defineTarget } from 'rc1-build';\nexport default definePipeline({ targets: [defineTarget({ name: 'noop', rule: 'rules/noop.ts', outputs: ['out/x'], params: ['big'] })] });\n`,
  );
  return dir;
}

console.log('# Config loading: keys → load time (cold: no parsed-config cache)\n');
console.log(machineReport() + '\n');
const rows: string[][] = [];
let worst = 0;
for (const n of SIZES) {
  const dir = workspace(n);
  const text = configText(n);
  try {
    const baseline = summarize(
      Array.from({ length: RUNS }, () => timeSync(() => YAML.parseDocument(text, { uniqueKeys: true }).toJS())),
    );
    const loader: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const cache = join(dir, `.bench-cache-${i}.json`);
      loader.push(
        await timeAsync(() =>
          loadConfigs(
            dir,
            { base: ['configs/default.yaml'], overlay: 'configs/profiles/dev.yaml' },
            new StatCache(dir, join(dir, '.bench-stat.json')),
            cache,
          ),
        ),
      );
    }
    const cli = summarize(
      Array.from({ length: RUNS }, () => {
        rmSync(join(dir, '.rc1'), { recursive: true, force: true });
        return runChildOk(process.execPath, [CLI, '-n'], { cwd: dir }).ms;
      }),
    );
    const node0 = summarize(Array.from({ length: RUNS }, () => runChildOk(process.execPath, ['-e', '0']).ms));
    const l = summarize(loader);
    worst = Math.max(worst, l.median);
    rows.push([
      fmtInt(n),
      fmtMs(baseline.median),
      fmtMs(l.median),
      fmtMs((l.median / n) * 1000),
      fmtMs(cli.median),
      fmtMs(node0.median),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  table(
    [
      'keys',
      'yaml uniqueKeys parse (before) ms',
      'loadConfigs ms',
      'µs/key',
      'cold `rc1-build -n` ms',
      '`node -e 0` ms',
    ],
    rows,
  ),
);
console.log(
  `\nmedian of ${RUNS} run(s); goal: 40,000 keys load in < ${GOAL_MS} ms — ${worst < GOAL_MS ? 'met' : 'NOT met'} (slowest ${fmtMs(worst)} ms)`,
);
console.log(loadNote('at end'));
