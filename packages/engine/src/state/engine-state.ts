// The names the engine itself owns directly under the workspace's state dir (.rc1/), with what
// each holds and what a clean of everything does with it. The one table behind both `clean` (what
// it removes, keeps or reports as left over) and the pipeline check that a target's declared
// `state` is a rule's own path, never one of these (a clean would otherwise delete the engine's
// records, its journal or its salt).
import { TARGET_STATE_ROOT } from './target-state-dir.ts';

export interface EngineStateEntry {
  what: string;
  clean: 'remove' | 'keep' | 'cache';
}

export const ENGINE_STATE: Readonly<Record<string, EngineStateEntry>> = {
  tmp: { what: 'temporary outputs of rules in progress', clean: 'remove' },
  [TARGET_STATE_ROOT]: { what: 'per-target state dirs', clean: 'remove' },
  cache: { what: 'the output cache', clean: 'cache' },
  'trace.log': { what: 'per-target records', clean: 'keep' },
  'statcache.json': { what: 'file hash cache', clean: 'keep' },
  'globcache.json': { what: 'glob expansion cache', clean: 'keep' },
  'manifest-state.json': { what: 'digest of the manifest and sidecars last checked', clean: 'keep' },
  compiled: { what: 'compiled rc1.build.ts and rules', clean: 'keep' },
  // Every name starting "compiled." (a key ending ".*" stands for all names with its prefix).
  'compiled.*': {
    what: 'compiled code being put in place from its copy in node_modules/.cache (left by a command killed then; the next one removes it)',
    clean: 'keep',
  },
  journal: { what: 'commit journal', clean: 'keep' },
  lock: { what: 'workspace lock', clean: 'keep' },
  salt: { what: 'salt of hashed env values', clean: 'keep' },
  slurm: { what: 'job files and logs of targets run as Slurm jobs', clean: 'keep' },
  'determinism.json': { what: 'check-determinism verdicts (read before uploading to a remote cache)', clean: 'keep' },
  determinism: { what: 'scratch runs of check-determinism', clean: 'keep' },
  'runs.jsonl': { what: 'run history (rc1-build log / diff)', clean: 'keep' },
  'uptodate.json': { what: "the last no-op build's up-to-date stamp (the no-op's fast path)", clean: 'remove' },
  'server.json': { what: 'the resident server of this workspace (rc1-build server)', clean: 'keep' },
  'server.sock': { what: "the resident server's socket", clean: 'keep' },
  'server.log': { what: "the resident server's log", clean: 'keep' },
  'server.start.lock': {
    what: 'held by a resident server while it starts (left by one killed then; the next start breaks it)',
    clean: 'keep',
  },
  // Every name starting "server.start.lock." (a key ending ".*" stands for all names with its prefix).
  'server.start.lock.*': {
    what: "the start lock's temp files and locks being broken (left by a server killed while starting; the next start sweeps them)",
    clean: 'keep',
  },
};

/** The entry of a name directly under .rc1/: its own, or that of a ".*" key whose prefix it has. */
export function engineStateEntry(name: string): EngineStateEntry | undefined {
  if (Object.hasOwn(ENGINE_STATE, name)) return ENGINE_STATE[name];
  for (const [k, e] of Object.entries(ENGINE_STATE))
    if (k.endsWith('.*') && name.length > k.length - 1 && name.startsWith(k.slice(0, -1))) return e;
  return undefined;
}

/** Whether a workspace-relative path is .rc1/ itself or lies in (or is) one of the engine's own names. */
export function isEngineStatePath(rel: string): boolean {
  const parts = rel.split('/');
  if (parts[0] !== '.rc1') return false;
  const first = parts[1];
  return first === undefined || first === '' || engineStateEntry(first) !== undefined;
}
