// The events the engine emits (STYLE 6: everything but report/ emits events; report/ prints).
// `--json` writes each as one JSON line; the console reporter renders them for people.
import type { Check } from '../api/index.ts';
import type { RootCause } from '../rebuild/root-cause.ts';
import type { RemoteStats } from '../cache/remote/stats.ts';

export interface OutputRef {
  path: string;
  sha256: string;
}

export type BuildEvent =
  | { event: 'plan'; targets: string[]; jobs: number; profile: string; dryRun: boolean }
  /** root: the one root cause (an edited file, a param, a rule…) and the targets it came through. */
  | {
      event: 'explain';
      target: string;
      decision: 'up-to-date' | 'restore' | 'run' | 'blocked' | 'missing-input' | 'may-run';
      reasons: string[];
      root?: RootCause;
    }
  | { event: 'start'; target: string; reason: string; reasons: string[] }
  | { event: 'skip'; target: string; reason: 'up-to-date' }
  | { event: 'restore'; target: string; reason: string; reasons: string[] }
  | { event: 'progress'; target: string; done: number; total: number; unit?: string }
  | { event: 'log'; target: string; line: string }
  /** unchanged: the outputs hash as before (early cutoff: its dependents stay up to date). */
  | {
      event: 'done';
      target: string;
      ms: number;
      outputs: OutputRef[];
      restored: boolean;
      summary?: string;
      unchanged?: boolean;
    }
  | { event: 'gate'; target: string; pass: boolean; checks: Check[]; report: string; replayed: boolean }
  | { event: 'fail'; target: string; error: string; log?: string; lastLines?: string[] }
  | { event: 'blocked'; target: string; by: string }
  | { event: 'warning'; message: string }
  | { event: 'recovered'; targets: string[] }
  /** The remote cache's summary, once per build that used one, before 'end'. */
  | { event: 'remote'; stats: RemoteStats }
  | {
      event: 'end';
      ok: boolean;
      ms: number;
      exitCode: number;
      counts: Counts;
      interrupted?: boolean;
      stats?: EngineStats;
    };

export interface Counts {
  ran: number;
  restored: number;
  upToDate: number;
  failed: number;
  gateFailed: number;
  blocked: number;
}

/** What the engine read: lets benchmarks and tests check that a no-op re-read nothing. */
export interface EngineStats {
  filesHashed: number;
  statHits: number;
  hashedPaths: string[];
  globWalks: number;
  compiles: number;
}

export interface Reporter {
  emit(e: BuildEvent): void;
  close(): void;
}
