// The folders of the spare rule workers' warm-up (worker.ts: warmUp), under the temporary folder.
// A warm-up removes its folder when it ends; a server killed during one leaves it behind. So each
// folder is named by the server's process (pid and start time, as /proc gives them), and a server
// that starts removes the folders of processes no longer running.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { procStat, processRunning } from '../state/process-identity.ts';

const PREFIX = 'rc1-warm-up-';
const NAME = /^rc1-warm-up-(\d+)-(\d+)-/;

/** A new folder for one warm-up of this process (a worker thread's is its process's). */
export function makeWarmUpDir(tmp: string = os.tmpdir()): string {
  const ticks = procStat(process.pid)?.startTicks ?? '0';
  return fs.mkdtempSync(path.join(tmp, `${PREFIX}${process.pid}-${ticks}-`));
}

/**
 * Removes the warm-up folders in `tmp` whose process (same pid and start time) no longer runs, and
 * returns their names. Where there is no /proc to tell (procStat of this very process fails),
 * nothing is removed.
 */
export function sweepWarmUpDirs(tmp: string = os.tmpdir(), procRoot = '/proc'): string[] {
  if (procStat(process.pid, procRoot) === null) return [];
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(tmp);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    if (processRunning(Number(m[1]), m[2]!, procRoot)) continue;
    try {
      fs.rmSync(path.join(tmp, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      /* another user's (a sticky temporary folder): theirs to remove */
    }
  }
  return removed;
}
