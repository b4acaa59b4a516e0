// What loading a rule into a fresh rule worker costs, piece by piece: a bare worker (V8 isolate and
// Node's bootstrap), the engine's worker module (dist/worker.js), and the rule's compiled bundle
// imported with Node's source maps on (`process.setSourceMapsEnabled(true)`, what the worker did
// before the third pass) and off. Each load is a fresh worker, run one at a time, the cases
// alternating; the CPU figure is the whole process's user + system time over the worker's life
// (the main thread waits, idle). Rules: the bench graph's concat rule and RC1 rules given by path.
//   node --import tsx bench/rule-load.ts [--reps 7] [rules/seed_pool.ts …]
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { ModuleCompiler, engineRoot } from '../packages/engine/src/config/compile-module.ts';
import { StatCache } from '../packages/engine/src/hash/stat-cache.ts';
import { makeGraph, writeRc1Workspace } from './graph-workspace.ts';
import { summarize } from './util.ts';

const args = process.argv.slice(2);
const repsAt = args.indexOf('--reps');
const reps = repsAt >= 0 ? Number(args.splice(repsAt, 2)[1]) : 7;
const rc1Rules = args.length > 0 ? args : ['rules/seed_pool.ts', 'rules/difficulty_metrics.ts'];
const repo = resolve(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'rule-load-'));

async function compile(root: string, entry: string): Promise<string> {
  const c = new ModuleCompiler(
    root,
    join(tmp, 'state', root === repo ? 'rc1' : 'graph'),
    new StatCache(root, join(tmp, `stat-${entry.replace(/\W/g, '_')}.json`)),
  );
  return c.compiled(entry);
}

const ws = join(tmp, 'graph');
writeRc1Workspace(ws, makeGraph().slice(0, 1), engineRoot());
const bundles: [string, string][] = [['concat (bench graph)', await compile(ws, 'rules/concat.ts')]];
for (const r of rc1Rules) bundles.push([r, await compile(repo, r)]);

// The worker's script: what it loads is decided by workerData; it reports the import's wall time.
const script = join(tmp, 'probe.mjs');
writeFileSync(
  script,
  `import { parentPort, workerData } from 'node:worker_threads';
const t0 = performance.now();
if (workerData.maps) process.setSourceMapsEnabled(true);
if (workerData.engine) await import(workerData.engine);
const t1 = performance.now();
if (workerData.bundle) await import(workerData.bundle);
const t2 = performance.now();
if (workerData.dep) await import(workerData.dep);
const t3 = performance.now();
parentPort.postMessage({ engine: t1 - t0, bundle: t2 - t1, dep: t3 - t2 });
`,
);
const engineWorker = pathToFileURL(join(engineRoot(), 'dist', 'worker.js')).href;

interface Case {
  name: string;
  data: { maps?: boolean; engine?: string; bundle?: string; dep?: string };
}

function once(c: Case): Promise<{ wall: number; cpu: number; bundle: number; engine: number; dep: number }> {
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  return new Promise((ok, fail) => {
    let msg: { engine: number; bundle: number; dep: number } | undefined;
    // The engine's worker module keeps its port open: the probe is terminated once it reported.
    // execArgv: [] as the engine's workers (this script runs under tsx, which a worker would inherit).
    const w = new Worker(script, { workerData: c.data, stdout: true, stderr: true, execArgv: [] });
    w.on('message', (m) => {
      msg = m;
      void w.terminate();
    });
    w.on('error', fail);
    w.on('exit', () => {
      const u = process.cpuUsage(u0);
      if (!msg) return fail(new Error(`${c.name}: the probe reported nothing`));
      ok({ wall: performance.now() - t0, cpu: (u.user + u.system) / 1000, ...msg });
    });
  });
}

const cases: Case[] = [
  { name: 'bare worker', data: {} },
  { name: 'engine worker module', data: { engine: engineWorker } },
];

// The Qwen3 tokenizer package that difficulty_metrics and shadow_set import when they count tokens
// (dist/main.mjs, 100 KiB, with a 494 KiB source map).
const tok = pathToFileURL(
  createRequire(join(repo, 'package.json'))
    .resolve('@lenml/tokenizers')
    .replace(/main\.js$/, 'main.mjs'),
).href;
for (const [name, file] of bundles) {
  const bundle = pathToFileURL(file).href;
  // A rule that counts Qwen3 tokens (difficulty_metrics, shadow_set) imports the package too.
  const dep = /difficulty_metrics|shadow_set/.test(name) ? tok : undefined;
  cases.push({ name: `${name}, maps on`, data: { maps: true, engine: engineWorker, bundle, ...(dep ? { dep } : {}) } });
  cases.push({ name: `${name}, maps off`, data: { engine: engineWorker, bundle, ...(dep ? { dep } : {}) } });
}
// zod, which most RC1 rules import (params schemas): from node_modules (ESM, one module per file)
// and as one esbuild bundle of the same entry (what a pre-bundled package would cost to load).
const zodEntry = pathToFileURL(join(repo, 'node_modules', 'zod', 'index.js')).href;
const zodOne = join(tmp, 'zod-one-file.mjs');
await esbuild.build({
  entryPoints: [fileURLToPath(zodEntry)],
  outfile: zodOne,
  bundle: true,
  format: 'esm',
  platform: 'node',
  logLevel: 'silent',
});
cases.push({ name: 'zod from node_modules', data: { engine: engineWorker, dep: zodEntry } });
cases.push({ name: 'zod as one bundled file', data: { engine: engineWorker, dep: pathToFileURL(zodOne).href } });
const results = new Map<string, { wall: number[]; cpu: number[]; bundle: number[]; engine: number[]; dep: number[] }>();
const load0 = loadavg()[0]!;
for (let r = 0; r < reps + 1; r++) {
  for (const c of r % 2 ? cases : [...cases].reverse()) {
    const m = await once(c);
    if (r === 0) continue; // warm-up: the file system cache
    const e = results.get(c.name) ?? { wall: [], cpu: [], bundle: [], engine: [], dep: [] };
    e.wall.push(m.wall);
    e.cpu.push(m.cpu);
    e.bundle.push(m.bundle);
    e.engine.push(m.engine);
    e.dep.push(m.dep);
    results.set(c.name, e);
  }
}
const f = (xs: number[]): string => {
  const s = summarize(xs);
  return `${s.best.toFixed(1)} / ${s.median.toFixed(1)}`;
};
console.log(
  `rule load into a fresh worker, ${reps} runs each, best / median ms; load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
);
for (const [name, file] of bundles) {
  const kb = (p: string): string => (statSync(p).size / 1024).toFixed(0);
  console.log(`  ${name}: bundle ${kb(file)} KiB, map ${kb(`${file}.map`)} KiB`);
}
console.log('| case | worker life (wall) | process CPU | engine module import | rule bundle import | package import |');
console.log('|---|---|---|---|---|---|');
for (const c of cases) {
  const e = results.get(c.name)!;
  console.log(`| ${c.name} | ${f(e.wall)} | ${f(e.cpu)} | ${f(e.engine)} | ${f(e.bundle)} | ${f(e.dep)} |`);
}
rmSync(tmp, { recursive: true, force: true });
