// The manifest's text (packages/engine/src/report/manifest.ts) is made without a sorted copy of
// the whole document and with far fewer collator comparisons; it must be byte for byte what the
// earlier code wrote: prettyJson of the manifest whose records and artifacts were sorted by
// localeCompare. The earlier code is kept here as the reference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Fingerprint } from '../../packages/engine/src/hash/fingerprint.ts';
import {
  type Artifact,
  type Manifest,
  buildManifest,
  localeSorted,
  manifestText,
  sidecarPath,
  sortedForJson,
} from '../../packages/engine/src/report/manifest.ts';
import type { TargetRecord } from '../../packages/engine/src/state/trace-log.ts';
import { deepFreeze } from '../../packages/engine/src/state/parsed-state.ts';
import { prettyJson, sortedCopy } from '../../packages/engine/src/util/canonical-json.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The manifest as the engine built it before (main 2026-11-26): the reference. */
function referenceManifest(
  records: ReadonlyMap<string, TargetRecord>,
  targets: ReadonlySet<string>,
  builtBy: Record<string, { key: string; name: string }>,
  profile: string,
  git: Manifest['git'],
): Manifest {
  const artifacts: Artifact[] = [];
  const out: Manifest['targets'] = {};
  for (const [name, rec] of [...records].sort(([a], [b]) => a.localeCompare(b))) {
    if (!targets.has(name) || rec.result === 'failed') continue;
    const links: Record<string, string> = {};
    for (const o of rec.outputs) for (const [rel, to] of Object.entries(o.links ?? {})) links[`${o.path}/${rel}`] = to;
    out[name] = {
      key: rec.key,
      result: rec.result,
      how: rec.how,
      at: rec.at,
      ...(rec.rule ? { rule: rec.rule } : {}),
      ...(builtBy[rec.key] ? { builtBy: builtBy[rec.key] } : {}),
      inputs: rec.fingerprint.inputs,
      outputs: rec.outputs.map((o) => o.path),
      ...(Object.keys(links).length ? { links } : {}),
    };
    for (const o of rec.outputs) {
      if (!o.dir) artifacts.push({ path: o.path, sha256: o.sha256, size: o.size, target: rec.name });
      else
        for (const [rel, sha] of Object.entries(o.files ?? {}))
          artifacts.push({ path: `${o.path}/${rel}`, sha256: sha, size: 0, target: rec.name, dir: o.path });
    }
  }
  artifacts.sort((a, b) => a.path.localeCompare(b.path));
  return { format: 1, profile, git, artifacts, targets: out };
}

const NAMES = ['t_0001', 't_0002', 't_10', 't_9', 'T_3', 'a-b', 'a_b', 'ab', 'é', 'e\u0301', 'Zeta', '10', '9', 'x.y'];

function randomRecords(r: () => number): Map<string, TargetRecord> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const recs = new Map<string, TargetRecord>();
  const n = 1 + Math.floor(r() * NAMES.length);
  for (let i = 0; i < n; i++) {
    const name = pick(NAMES);
    const dir = r() < 0.2;
    const out = `out/${pick(NAMES)}${dir ? '' : '.txt'}`;
    const groups = pick([['src'], ['src', 'cfg'], ['b', 'a'], []]);
    const inputs: Record<string, Record<string, string>> = {};
    for (const g of groups) {
      inputs[g] = {};
      for (const p of [pick(NAMES), pick(NAMES), 'src/z.txt', 'src/a.txt'].slice(0, 1 + Math.floor(r() * 4)))
        inputs[g][p] = pick(['aa', 'bb']);
    }
    recs.set(name, {
      name,
      key: pick(['k1', 'k2', 'k3']),
      fingerprint: { inputs } as unknown as Fingerprint,
      outputs: [
        dir
          ? {
              path: out,
              sha256: 'd',
              size: 0,
              dir: true,
              files: Object.fromEntries([pick(NAMES), pick(NAMES)].map((f) => [f, 'ff'])),
              ...(r() < 0.5 ? { links: { latest: pick(NAMES) } } : {}),
            }
          : { path: out, sha256: pick(['s1', 's2']), size: Math.floor(r() * 100), dir: false },
      ],
      result: pick(['ok', 'ok', 'gate-failed', 'failed'] as const),
      how: pick(['ran', 'restored'] as const),
      ms: 1,
      at: '2026-01-01T00:00:00.000Z',
      ...(r() < 0.5 ? { rule: { name: 'r', version: 2 } } : {}),
    });
  }
  return recs;
}

test('the manifest text is byte for byte the earlier prettyJson of the localeCompare-sorted manifest (500 random trace states)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-manifest-text-'));
  const stateDir = path.join(root, '.rc1');
  fs.mkdirSync(stateDir);
  const r = rng(7);
  for (let i = 0; i < 500; i++) {
    const records = randomRecords(r);
    const declared = new Set([...records.keys()].filter(() => r() < 0.9));
    const builtBy: Record<string, { key: string; name: string }> =
      r() < 0.5 ? { k1: { name: 'host-a', key: 'pk' } } : {};
    fs.writeFileSync(path.join(stateDir, 'provenance.json'), JSON.stringify({ format: 1, builtBy }));
    const ws = {
      root,
      stateDir,
      profile: 'dev',
      pipeline: { targets: new Map([...declared].map((n) => [n, {}])), manifestDir: 'reports/build' },
      trace: { records, file: path.join(stateDir, 'trace.log') },
    };
    const git = { commit: r() < 0.5 ? 'abc' : null, dirty: r() < 0.5 };
    const built = buildManifest(ws, git);
    // a directory artifact's size is read from disk (absent here: 0 in both)
    const want = prettyJson(referenceManifest(records, declared, builtBy, 'dev', git));
    assert.equal(manifestText(built), want);
  }
});

test('localeSorted gives what a localeCompare sort gives, ties (é and e + U+0301) and all', () => {
  const r = rng(3);
  for (let i = 0; i < 2000; i++) {
    const xs = Array.from(
      { length: Math.floor(r() * 12) },
      () => NAMES[Math.floor(r() * NAMES.length)]! + (r() < 0.3 ? '' : String(Math.floor(r() * 3))),
    );
    const items = xs.map((s, j) => ({ s, j }));
    assert.deepEqual(
      localeSorted(items, (x) => x.s),
      items.slice().sort((a, b) => a.s.localeCompare(b.s)),
      JSON.stringify(xs),
    );
  }
});

test('sortedForJson prints as sortedCopy prints, and copies nothing already in order', () => {
  const cases: unknown[] = [
    { b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } },
    { a: 1, b: undefined, c: [undefined, { y: 1, x: 2 }] },
    { 10: 'x', 9: 'y', a: 'z' },
    { a: { b: { c: 1 } }, x: [1, 2, 3] },
    [{ b: 1, a: 2 }, 'x', null],
    { when: new Date(0), a: 1 },
  ];
  for (const c of cases)
    assert.equal(JSON.stringify(sortedForJson(c), null, 2), JSON.stringify(sortedCopy(c), null, 2));
  const ordered = { a: { b: [1, { c: 2, d: 3 }] }, z: 'x' };
  assert.equal(sortedForJson(ordered), ordered);
  const inner = { b: 1, a: 2 };
  const outer = { x: inner, y: [inner] };
  const copy = sortedForJson(outer) as { x: unknown; y: unknown[] };
  assert.notEqual(copy, outer);
  assert.deepEqual(Object.keys(copy.x as object), ['a', 'b']);
});

test('sidecar paths are the joined paths, by string where the parts are plain', () => {
  for (const [dir, p] of [
    ['reports/build', 'out/a.txt'],
    ['reports/build', 'out/.hidden'],
    ['reports/./build', 'out//a.txt'],
    ['reports/build/', 'out/../x'],
    ['r', 'a b/c'],
  ] as const)
    assert.equal(sidecarPath(dir, p), path.posix.join(dir, 'sha256', `${p}.sha256`));
});

test('builds that see the same frozen records again share their entries, and the text stays byte for byte the whole serialisation (300 random steps)', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-manifest-shared-'));
  const stateDir = path.join(root, '.rc1');
  fs.mkdirSync(stateDir);
  const r = rng(11);
  // The records as the server sees them: frozen (a kept trace parse), some replaced each step.
  let records = new Map<string, TargetRecord>();
  let shared = 0;
  for (let i = 0; i < 300; i++) {
    const fresh = randomRecords(r);
    const next = new Map(records);
    for (const [name, rec] of fresh) if (r() < 0.3 || !next.has(name)) next.set(name, deepFreeze(rec));
    for (const name of [...next.keys()]) if (r() < 0.05) next.delete(name);
    records = next;
    // Directory outputs' files on disk, their sizes changing now and then.
    for (const rec of records.values())
      for (const o of rec.outputs)
        for (const f of Object.keys(o.files ?? {}))
          if (r() < 0.2) {
            fs.mkdirSync(path.join(root, o.path), { recursive: true });
            fs.writeFileSync(path.join(root, o.path, f), 'x'.repeat(Math.floor(r() * 5)));
          }
    const declared = new Set([...records.keys()].filter(() => r() < 0.95));
    const builtBy: Record<string, { key: string; name: string }> =
      r() < 0.3 ? { k1: { name: r() < 0.5 ? 'host-a' : 'host-b', key: 'pk' } } : {};
    fs.writeFileSync(path.join(stateDir, 'provenance.json'), JSON.stringify({ format: 1, builtBy }));
    const ws = {
      root,
      stateDir,
      profile: 'dev',
      pipeline: { targets: new Map([...declared].map((n) => [n, {}])), manifestDir: 'reports/build' },
      trace: { records, file: path.join(stateDir, 'trace.log') },
    };
    const git = { commit: r() < 0.5 ? 'abc' : null, dirty: r() < 0.5 };
    const first = buildManifest(ws, git);
    const again = buildManifest(ws, git);
    for (const name of Object.keys(first.targets)) {
      assert.equal(again.targets[name], first.targets[name], 'a frozen record: its entry made once');
      shared++;
    }
    const whole = JSON.stringify(sortedForJson(again), null, 2) + '\n';
    assert.equal(manifestText(first), whole, `step ${i}`);
    assert.equal(manifestText(again), whole, `step ${i}, texts kept`);
    // Directory files' sizes as on disk (the reference reads none: 0), else the earlier manifest.
    const ref = referenceManifest(records, declared, builtBy, 'dev', git);
    for (const a of ref.artifacts)
      if (a.dir !== undefined) a.size = fs.statSync(path.join(root, a.path), { throwIfNoEntry: false })?.size ?? 0;
    assert.equal(manifestText(again), prettyJson(ref), `step ${i}, against the earlier manifest`);
  }
  assert.ok(shared > 1000, `${shared} entries shared`);
});

test('a manifest of another shape than buildManifest makes is printed as the whole serialisation prints it', () => {
  const cases = [
    { artifacts: [], format: 1, git: { commit: null, dirty: null }, profile: 'p', targets: {} },
    {
      targets: { 10: { b: 1, a: [] }, 9: { a: {} }, x: { z: 'é\n"' } },
      profile: 'p',
      format: 1,
      git: null,
      artifacts: [{ z: 1, a: 2 }],
    },
    { format: 1, extra: undefined, artifacts: [{ when: new Date(0) }], targets: {} },
    { format: 1, artifacts: [null], targets: {} },
    { format: 1, artifacts: [], targets: { a: undefined, b: { x: 1 } } },
    { format: 1, artifacts: [], targets: { a: () => 1 } },
    { format: 1, artifacts: [], targets: { a: new Date(0) } },
    {},
  ];
  for (const c of cases)
    assert.equal(
      manifestText(c as unknown as Manifest),
      JSON.stringify(sortedForJson(c), null, 2) + '\n',
      JSON.stringify(c),
    );
});
