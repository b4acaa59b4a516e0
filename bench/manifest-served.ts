// The manifest of the 1 000-target graph as the resident server makes it on a one-leaf change:
// the trace's records frozen and shared from one build to the next (a kept trace parse), 34 of
// them replaced by new ones each build, buildManifest + manifestText timed in one warm process
// (CPU, process.cpuUsage) for two engines' sources, alternating A B B A; the texts must agree.
// Run: node --import tsx bench/manifest-served.ts WORKSPACE ENGINE_SRC_A ENGINE_SRC_B [ROUNDS]
//   WORKSPACE: a built bench/graph-workspace.ts workspace (its .rc1/trace.log);
//   ENGINE_SRC_*: a packages/engine/src directory.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadNote } from './util.ts';

const [wsDir, srcA, srcB, roundsArg] = process.argv.slice(2);
if (!wsDir || !srcA || !srcB) throw new Error('usage: manifest-served.ts WORKSPACE ENGINE_SRC_A ENGINE_SRC_B [ROUNDS]');
const ROUNDS = Number(roundsArg ?? 40);
type M = typeof import('../packages/engine/src/report/manifest.ts');
type T = typeof import('../packages/engine/src/state/trace-log.ts');
type P = typeof import('../packages/engine/src/state/parsed-state.ts');
const load = async (src: string) => ({
  m: (await import(pathToFileURL(join(resolve(src), 'report/manifest.ts')).href)) as M,
  t: (await import(pathToFileURL(join(resolve(src), 'state/trace-log.ts')).href)) as T,
  p: (await import(pathToFileURL(join(resolve(src), 'state/parsed-state.ts')).href)) as P,
});
const engines = [await load(srcA), await load(srcB)];
const text = readFileSync(join(wsDir, '.rc1', 'trace.log'), 'utf8');
const stateDir = join(wsDir, '.rc1');
console.log(loadNote('at start'));
const parsed = engines[1]!.t.parseTrace(text); // exported from this pass's engine on
const sides = engines.map((e) => {
  const records = new Map(structuredClone(parsed.records));
  for (const r of records.values()) e.p.deepFreeze(r);
  const ws = {
    root: wsDir,
    stateDir,
    profile: 'default',
    pipeline: { targets: new Map([...records.keys()].map((n) => [n, {}])), manifestDir: 'reports/build' },
    trace: { records, file: join(stateDir, 'trace.log') },
  };
  return { e, ws, cpu: [] as number[], wall: [] as number[], build: [] as number[], text: [] as number[] };
});
const names = [...sides[0]!.ws.trace.records.keys()].sort().slice(0, 34);
for (let round = 0; round < ROUNDS + 5; round++) {
  const order = round % 2 ? [1, 0] : [0, 1];
  const texts: string[] = [];
  for (const k of order) {
    const s = sides[k]!;
    // A one-leaf change: 34 records replaced by new (then frozen, as the next command's parse) ones.
    for (const n of names) {
      const r = s.ws.trace.records.get(n)!;
      s.ws.trace.records.set(
        n,
        s.e.p.deepFreeze({ ...r, at: new Date(Date.UTC(2026, 0, 1, 0, 0, round)).toISOString() }),
      );
    }
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const built = s.e.m.buildManifest(s.ws, { commit: null, dirty: null });
    const t1 = performance.now();
    texts[k] = s.e.m.manifestText(built);
    const t2 = performance.now();
    const c = process.cpuUsage(c0);
    if (round >= 5) {
      s.wall.push(t2 - t0);
      s.build.push(t1 - t0);
      s.text.push(t2 - t1);
      s.cpu.push((c.user + c.system) / 1000);
    }
  }
  if (texts[0] !== texts[1]) throw new Error(`round ${round}: the two engines' manifests differ`);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2);
const min = (xs: number[]) => Math.min(...xs).toFixed(2);
console.log(`buildManifest + manifestText, ${ROUNDS} rounds each, texts identical`);
console.log('| engine | CPU ms min / median | wall ms min / median | buildManifest wall | manifestText wall |');
console.log('|---|---|---|---|---|');
for (const [i, s] of sides.entries())
  console.log(
    `| ${i ? 'B' : 'A'} | ${min(s.cpu)} / ${med(s.cpu)} | ${min(s.wall)} / ${med(s.wall)} | ${min(s.build)} / ${med(s.build)} | ${min(s.text)} / ${med(s.text)} |`,
  );
console.log(loadNote('at end'));
