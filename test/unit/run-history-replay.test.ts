// Compacting the run history (packages/engine/src/state/run-history.ts) finds the whole state of
// the first run it keeps by folding the lines into one accumulator (replayAt) instead of replaying
// every run with a copy of the whole state each: it must give exactly what replay() gives, key
// order included, so the compacted file is byte for byte what it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunHistory, type RunLine, replay, replayAt } from '../../packages/engine/src/state/run-history.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomLines(r: () => number, n: number): RunLine[] {
  const names = ['t1', 't2', 't3', 'b', 'a', '10'];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const lines: RunLine[] = [];
  for (let id = 1; id <= n; id++) {
    const full = r() < 0.15;
    const state: RunLine['state'] = {};
    const checks: RunLine['checks'] = {};
    const metrics: RunLine['metrics'] = {};
    for (const t of names) {
      if (full ? r() < 0.8 : r() < 0.3)
        state[t] = r() < (full ? 0 : 0.2) ? null : { key: pick(['k1', 'k2', 'k3']), outputs: { [`out/${t}`]: 'h' } };
      if (r() < 0.2) checks[t] = r() < 0.3 && !full ? null : [{ name: 'c', pass: r() < 0.5 } as never];
      if (r() < 0.2) metrics[`m/${t}`] = r() < 0.3 && !full ? null : { loss: Math.floor(r() * 10) };
    }
    lines.push({
      id,
      format: 1,
      at: `2026-01-01T00:00:${String(id % 60).padStart(2, '0')}.000Z`,
      ms: id,
      exitCode: 0,
      command: 'rc1-build',
      profile: 'dev',
      git: { commit: null, dirty: null },
      counts: { ran: 0, restored: 0, upToDate: 0, failed: 0, gateFailed: 0, blocked: 0 },
      outcomes: {},
      trace: 't',
      paramsHash: 'p',
      full,
      state,
      ...(full || r() < 0.2 ? { params: { lr: Math.floor(r() * 3) } } : {}),
      checks,
      metrics,
    } as RunLine);
  }
  return lines;
}

test('replayAt gives replay()[i] for every i, key order included, and the number of runs', () => {
  const r = rng(5);
  for (let h = 0; h < 200; h++) {
    const lines = randomLines(r, Math.floor(r() * 30));
    const runs = replay(lines);
    assert.equal(replayAt(lines, -1).runs, runs.length);
    for (let i = 0; i < runs.length; i++) assert.equal(JSON.stringify(replayAt(lines, i).run), JSON.stringify(runs[i]));
    assert.equal(replayAt(lines, runs.length).run, null);
  }
});

test('a compacted history is the one the replay of every run gave: the newest runs, the first of them full', () => {
  const r = rng(9);
  for (let h = 0; h < 30; h++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-runs-compact-'));
    const file = path.join(dir, 'runs.jsonl');
    const lines = randomLines(r, 5 + Math.floor(r() * 40));
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l) + '\n').join(''));
    const keep = 1 + Math.floor(r() * 10);
    new RunHistory(file, keep).compact();
    // The reference: what compact() wrote when it replayed every run.
    const runs = replay(lines);
    const from = Math.max(0, runs.length - keep);
    const kept = lines.slice(lines.length - (runs.length - from));
    let want = lines.map((l) => JSON.stringify(l) + '\n').join('');
    if (kept.length) {
      const { id, ...head } = runs[from]!;
      want = [{ id, format: 1, ...head, full: true }, ...kept.slice(1)].map((x) => JSON.stringify(x) + '\n').join('');
    }
    assert.equal(fs.readFileSync(file, 'utf8'), want);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
