// `rc1-build sync [--round N] [--verbose] [--json]`: writes <sync dir>/SYNC_round<N>.json, the
// hand-off package of report/sync-package.ts (validated against its schema before it is written),
// for the teams the pipeline declares (definePipeline({ sync: { from, peers } })). The round
// defaults to one after the last package written. --verbose adds the round ritual: the last 20
// lines of each JSON Lines metrics file and a two-level tree of the workspace.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../config/usage-error.ts';
import { type Manifest, manifestPath } from '../report/manifest.ts';
import { buildSyncPackage, metricsTails, nextRound, syncSchema, tree2 } from '../report/sync-package.ts';
import { historyOf } from '../report/run-recorder.ts';
import { readJsonOrNull, writeFileAtomic } from '../util/fs.ts';
import { openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export async function run(root: string, args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: { round: { type: 'string' }, verbose: { type: 'boolean', short: 'v' }, json: { type: 'boolean' } },
  });
  if (positionals.length)
    throw new UsageError({
      headline: `sync takes no arguments, got ${positionals.join(' ')}`,
      hint: 'rc1-build sync [--round N] [--verbose]',
    });
  const ws = await openWorkspace(root);
  const sync = ws.pipeline.sync;
  if (!sync)
    throw new UsageError({
      headline: 'this pipeline declares no sync hand-off',
      hint: "declare it in the pipeline: definePipeline({ sync: { from: 'us', peers: [{ name: 'them', provides: [{ name, path, desc }] }] } })",
    });
  const dir = path.join(root, sync.dir);
  const round = values.round === undefined ? nextRound(dir) : Number(values.round);
  if (!Number.isInteger(round) || round < 1)
    throw new UsageError({ headline: `--round expects a positive integer, got ${JSON.stringify(values.round)}` });
  const mfile = manifestPath(ws.pipeline.manifestDir);
  const manifest = readJsonOrNull<Manifest>(path.join(root, mfile));
  if (!manifest || !Array.isArray(manifest.artifacts))
    throw new UsageError({
      headline: `no manifest at ${mfile}`,
      hint: 'build first: the package lists the artifacts of the manifest',
    });
  const last = historyOf(ws).lastLine();
  const pkg = buildSyncPackage(
    ws,
    manifest,
    round,
    last ? [`last run ${last.id} (${last.command}, exit ${last.exitCode}) at ${last.at}`] : [],
  );
  const checked = (await syncSchema()).safeParse(pkg);
  if (!checked.success)
    throw new Error(`internal error: the SYNC package fails its own schema: ${checked.error.message}; please report`);
  const file = path.join(dir, `SYNC_round${round}.json`);
  fs.mkdirSync(dir, { recursive: true });
  writeFileAtomic(file, JSON.stringify(pkg, null, 2) + '\n'); // in the contract's key order
  const rel = path.relative(root, file);
  if (values.json) io.out(JSON.stringify({ file: rel, package: pkg }) + '\n');
  else {
    const needs = Object.entries(pkg).filter(([k]) => k.startsWith('need_from_')) as [string, unknown[]][];
    io.out(
      `sync: ${rel} · round ${round} · ${pkg.artifacts_produced.length} artifacts · ${needs.map(([k, v]) => `${k} ${v.length}`).join(', ')} · ${pkg.risks_blockers[0] === 'none' ? 'no risks' : `${pkg.risks_blockers.length} risks/blockers`}\n`,
    );
  }
  if (values.verbose) {
    for (const t of metricsTails(ws)) {
      io.out(`\n== ${t.file} (last ${t.lines.length} lines)\n`);
      for (const l of t.lines) io.out(l + '\n');
    }
    io.out('\n== tree -L 2\n');
    for (const l of tree2(root)) io.out(l + '\n');
  }
  return 0;
}
