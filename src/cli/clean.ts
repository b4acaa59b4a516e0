// `rc1-build clean [TARGET…] [--cache]`: removes the named targets' outputs (all targets when
// none is named), their records and their state dirs (.rc1/state/<target>/: a training run's
// checkpoints and previous runs, say; all of .rc1/state/ when none is named), rewrites the
// manifest, and keeps the output cache unless --cache is given, so a clean followed by a build
// restores instead of re-running.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeManifest } from '../report/manifest.ts';
import { TARGET_STATE_ROOT, targetStateDir } from '../state/target-state-dir.ts';
import { rmrf } from '../util/fs.ts';
import { type Workspace, assertPathsOnDisk } from './workspace.ts';

interface Io { out: (s: string) => void }

export function runClean(ws: Workspace, names: string[], cache: boolean, io: Io): number {
  // Never delete outside the workspace: an output under a symlink that leads out is refused.
  assertPathsOnDisk(ws, names.length ? names : ws.pipeline.order);
  ws.lock.acquire('rc1-build clean');
  try {
    ws.trace.repair();
    ws.committer.recover();
    const targets = names.length ? names : ws.pipeline.order;
    let removed = 0;
    let states = 0;
    for (const n of targets) {
      for (const o of ws.pipeline.targets.get(n)!.outputs) {
        const abs = path.join(ws.root, o.path);
        if (fs.existsSync(abs)) { rmrf(abs); removed++; }
        ws.stat.forget(o.path);
      }
      ws.trace.remove(n);
      const state = targetStateDir(ws.stateDir, n);
      if (fs.existsSync(state)) { rmrf(state); states++; }
    }
    if (!names.length) {
      rmrf(path.join(ws.stateDir, 'tmp'));
      if (fs.existsSync(path.join(ws.stateDir, TARGET_STATE_ROOT))) { rmrf(path.join(ws.stateDir, TARGET_STATE_ROOT)); states = Math.max(states, 1); }
    }
    if (cache) ws.cache.clear();
    writeManifest(ws, { commit: null, dirty: null });
    ws.trace.close();
    ws.saveCaches();
    io.out(`clean: removed ${removed} output${removed === 1 ? '' : 's'} of ${targets.length} target${targets.length === 1 ? '' : 's'}${states ? ` and their state (${path.relative(ws.root, path.join(ws.stateDir, TARGET_STATE_ROOT))}/)` : ''}${cache ? ', and the output cache' : ' (the output cache is kept; --cache removes it)'}\n`);
    return 0;
  } finally {
    ws.lock.release();
  }
}
