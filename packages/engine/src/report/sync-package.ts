// The SYNC hand-off package (`rc1-build sync`): one JSON file per round that tells the teams this
// pipeline exchanges artifacts with what it needs from each of them and what it produced, in the
// contract `from`, `round`, `need_from_<peer>` (name/path/desc), `artifacts_produced` (name/path,
// sha256 and producing target, from the manifest), `risks_blockers` (failed or waived gate checks
// with their hints, failed targets) and `notes`. Peer names and this side's name come from the
// pipeline's `sync` declaration. The schema is zod, loaded only by the commands that need it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ResolvedPipeline } from '../graph/resolved.ts';
import type { TargetRecord } from '../state/trace-log.ts';
import type { Manifest } from './manifest.ts';

export interface SyncNeed {
  name: string;
  path: string;
  desc: string;
}
export interface SyncArtifact {
  name: string;
  path: string;
  sha256: string;
  target: string;
}

export interface SyncPackage {
  from: string;
  round: number;
  /** One key per declared peer: need_from_<peer>. */
  [needFrom: `need_from_${string}`]: SyncNeed[];
  artifacts_produced: SyncArtifact[];
  risks_blockers: string[];
  notes: string;
}

/** The zod schema of a package (strict: a key outside the contract is an error). */
export async function syncSchema(): Promise<import('zod').ZodType<SyncPackage>> {
  const { z } = await import('zod');
  const need = z.object({ name: z.string().min(1), path: z.string().min(1), desc: z.string().min(1) }).strict();
  const artifact = z
    .object({
      name: z.string().min(1),
      path: z.string().min(1),
      sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 in hex'),
      target: z.string().min(1),
    })
    .strict();
  const base = z.object({
    from: z.string().min(1),
    round: z.number().int().min(1),
    artifacts_produced: z.array(artifact),
    risks_blockers: z.array(z.string().min(1)).min(1, 'at least one entry ("none" when there is none)'),
    notes: z.string(),
  });
  const needs = z.array(need);
  return base.catchall(z.unknown()).superRefine((v, ctx) => {
    for (const [k, x] of Object.entries(v)) {
      if (['from', 'round', 'artifacts_produced', 'risks_blockers', 'notes'].includes(k)) continue;
      if (!/^need_from_\w+$/.test(k)) {
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message:
            'not a key of the SYNC contract (from, round, need_from_<peer>, artifacts_produced, risks_blockers, notes)',
        });
        continue;
      }
      const r = needs.safeParse(x);
      if (!r.success)
        for (const i of r.error.issues)
          ctx.addIssue({
            code: 'custom',
            path: [k, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
            message: i.message,
          });
    }
  }) as unknown as import('zod').ZodType<SyncPackage>;
}

interface SyncWorkspace {
  root: string;
  profile: string;
  pipeline: ResolvedPipeline;
  trace: { records: ReadonlyMap<string, TargetRecord> };
}

/** The static part of a glob (up to the first wildcard), e.g. templates/pack_v2/ for templates/pack_v2/*.json. */
function globBase(pattern: string): string {
  const i = pattern.search(/[*?[{]/);
  return i < 0 ? pattern : pattern.slice(0, pattern.lastIndexOf('/', i) + 1);
}

const under = (p: string, dir: string): boolean => {
  const d = dir.replace(/\/$/, '');
  return p === d || p.startsWith(d + '/');
};

/**
 * What this pipeline needs from each peer: every item a peer provides that a declared input is
 * at or under (or that lies under a glob's folder), and every declared source input that is
 * missing here and no peer provides (needed from the first peer).
 */
export function needsOf(ws: SyncWorkspace): Record<string, SyncNeed[]> {
  const sync = ws.pipeline.sync!;
  const out: Record<string, SyncNeed[]> = Object.fromEntries(
    sync.peers.map((p) => [`need_from_${p.name}`, [] as SyncNeed[]]),
  );
  const users = new Map<string, Set<string>>(); // declared source input (path or glob) → targets
  for (const t of ws.pipeline.targets.values()) {
    for (const g of t.inputs) {
      for (const it of g.items) {
        const key = it.kind === 'file' && !it.producer ? it.path : it.kind === 'glob' ? it.pattern : null;
        if (key) (users.get(key) ?? users.set(key, new Set()).get(key)!).add(t.name);
      }
    }
  }
  const covered = new Set<string>();
  for (const peer of sync.peers) {
    for (const item of peer.provides) {
      const readers = new Set<string>();
      for (const [input, ts] of users) {
        const base = globBase(input);
        if (under(base, item.path) || under(item.path, base.replace(/\/$/, '') || '.')) {
          for (const t of ts) readers.add(t);
          covered.add(input);
        }
      }
      if (readers.size) out[`need_from_${peer.name}`]!.push({ name: item.name, path: item.path, desc: item.desc });
    }
  }
  const first = `need_from_${sync.peers[0]!.name}`;
  for (const [input, ts] of [...users].sort(([a], [b]) => a.localeCompare(b))) {
    if (covered.has(input)) continue;
    const isGlob = /[*?[{]/.test(input);
    const missing = isGlob
      ? !fs.existsSync(path.join(ws.root, globBase(input) || '.'))
      : !fs.existsSync(path.join(ws.root, input));
    if (missing)
      out[first]!.push({
        name: path.posix.basename(globBase(input).replace(/\/$/, '') || input).replace(/\.[^.]+$/, ''),
        path: input,
        desc: `declared input of ${[...ts].sort().join(', ')}; missing here and no peer declares it`,
      });
  }
  return out;
}

/** Failed or waived gate checks (with their hints) and failed targets, one line each; ["none"] when there are none. */
export function risksOf(ws: SyncWorkspace): string[] {
  const out: string[] = [];
  for (const name of ws.pipeline.order) {
    const t = ws.pipeline.targets.get(name)!;
    const r = ws.trace.records.get(name);
    if (!r) continue;
    if (r.result === 'failed') {
      out.push(`target ${name} failed: ${r.error ?? 'unknown error'}`);
      continue;
    }
    if (!t.gate) continue;
    for (const c of r.checks ?? []) {
      if (c.status !== 'fail' && c.status !== 'waived') continue;
      const v = `${JSON.stringify(c.value)} ${c.op} ${JSON.stringify(c.threshold)}`;
      const what = c.status === 'fail' ? `FAILED (${v})` : `WAIVED (${c.waived ?? 'waived'}; ${v})`;
      out.push(
        `gate ${name}: ${c.name} ${what}${c.hint ? ` — hint: ${c.hint}` : ''}${t.report ? ` · ${t.report}` : ''}`,
      );
    }
  }
  return out.length ? out : ['none'];
}

/** The package for a round, from the manifest (artifacts and their hashes) and the trace (gates). */
export function buildSyncPackage(
  ws: SyncWorkspace,
  manifest: Manifest,
  round: number,
  extraNotes: string[] = [],
): SyncPackage {
  const sync = ws.pipeline.sync!;
  const artifacts: SyncArtifact[] = manifest.artifacts.map((a) => ({
    name: path.posix.basename(a.path).replace(/\.[^.]+$/, ''),
    path: a.path,
    sha256: a.sha256,
    target: a.target,
  }));
  const gates = [...ws.pipeline.targets.values()].filter((t) => t.gate);
  const recs = gates.map((g) => ws.trace.records.get(g.name));
  const passed = recs.filter((r) => r?.result === 'ok').length;
  const failed = recs.filter((r) => r?.result === 'gate-failed').length;
  const notBuilt = recs.filter((r) => !r || r.result === 'failed').length;
  const git = manifest.git.commit
    ? `${manifest.git.commit.slice(0, 9)}${manifest.git.dirty ? ' (dirty)' : ''}`
    : 'no git commit';
  const notes = [
    `${ws.pipeline.name ?? 'pipeline'}, profile ${manifest.profile}, built at ${git}`,
    `${artifacts.length} artifacts from ${Object.keys(manifest.targets).length} targets`,
    `gates: ${passed} passed, ${failed} failed, ${notBuilt} not built (of ${gates.length})`,
    ...extraNotes,
  ].join('; ');
  const needs = needsOf(ws);
  return {
    from: sync.from,
    round,
    ...needs,
    artifacts_produced: artifacts,
    risks_blockers: risksOf(ws),
    notes,
  } as SyncPackage;
}

/** The next round: one after the highest SYNC_round<N>.json in the folder (1 when none). */
export function nextRound(dir: string): number {
  let max = 0;
  try {
    for (const f of fs.readdirSync(dir)) {
      const m = /^SYNC_round(\d+)\.json$/.exec(f);
      if (m) max = Math.max(max, Number(m[1]));
    }
  } catch {
    /* no packages yet */
  }
  return max + 1;
}

/** `tree -L 2` of a folder in plain text (dot files, node_modules and .rc1 left out). */
export function tree2(root: string): string[] {
  const skip = (n: string): boolean => n.startsWith('.') || n === 'node_modules';
  const list = (d: string): fs.Dirent[] => {
    try {
      return fs
        .readdirSync(d, { withFileTypes: true })
        .filter((e) => !skip(e.name))
        .sort((a, b) => a.name.localeCompare(b.name));
    } catch {
      return [];
    }
  };
  const out = ['.'];
  const top = list(root);
  top.forEach((e, i) => {
    const last = i === top.length - 1;
    out.push(`${last ? '└── ' : '├── '}${e.name}${e.isDirectory() ? '/' : ''}`);
    if (!e.isDirectory()) return;
    const sub = list(path.join(root, e.name));
    sub.forEach((s, j) =>
      out.push(
        `${last ? '    ' : '│   '}${j === sub.length - 1 ? '└── ' : '├── '}${s.name}${s.isDirectory() ? '/' : ''}`,
      ),
    );
  });
  return out;
}

/** The last n lines of each declared JSON Lines metrics file (the round ritual's metrics tail). */
export function metricsTails(ws: SyncWorkspace, n = 20): { file: string; lines: string[] }[] {
  const out: { file: string; lines: string[] }[] = [];
  for (const t of ws.pipeline.targets.values()) {
    for (const m of t.metrics ?? []) {
      if (!/\.jsonl$/.test(m)) continue;
      let text = '';
      try {
        text = fs.readFileSync(path.join(ws.root, m), 'utf8');
      } catch {
        out.push({ file: m, lines: ['(not built)'] });
        continue;
      }
      out.push({
        file: m,
        lines: text
          .split('\n')
          .filter((l) => l.trim())
          .slice(-n),
      });
    }
  }
  return out;
}
