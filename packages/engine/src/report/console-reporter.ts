// Renders build events for people. Progress of long rules is a live bar on a terminal (stderr)
// and plain lines at every 10 % otherwise. Output is golden-tested: keep formats stable.
import type { Check } from '../api/index.ts';
import type { BuildEvent, Reporter } from './events.ts';
import type { RootCause } from '../rebuild/root-cause.ts';
import { formatReason } from '../hash/fingerprint.ts';

export interface ConsoleOptions { explain: boolean; verbose: boolean; tty: boolean; out: (s: string) => void; err: (s: string) => void }

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(2)}s`;
}

function fmtValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  if (Array.isArray(v)) return `[${v.map(fmtValue).join(', ')}]`;
  return JSON.stringify(v) ?? 'null';
}

/** The checks table printed for a gate (also used by `status`). */
export function checksTable(checks: readonly Check[]): string[] {
  const result = (c: Check): string =>
    c.status === 'waived' ? `WAIVED (${c.waived ?? ''})` : c.status === 'n/a' ? `n/a (${c.not_applicable ?? ''})` : c.status === 'pass' ? 'pass' : 'FAIL';
  const rows = checks.map((c) => [c.name, fmtValue(c.value), c.op, fmtValue(c.threshold), result(c)]);
  const head = ['check', 'value', 'op', 'threshold', 'result'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => '    ' + r.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd();
  const out = [line(head)];
  checks.forEach((c, i) => {
    out.push(line(rows[i]!));
    if (c.status === 'fail' && c.hint) out.push(`      hint: ${c.hint}`);
  });
  return out;
}

export function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : n < 1024 ** 3 ? `${(n / 1024 ** 2).toFixed(1)} MiB` : `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export class ConsoleReporter implements Reporter {
  private bars = new Map<string, { done: number; total: number; unit?: string; lastPct: number }>();
  private barShown = false;
  private dryRun = false;
  /** Root cause → the targets it rebuilt (in order) and where early cutoff stopped it. */
  private groups = new Map<string, { targets: string[]; cutoffs: string[] }>();
  private roots = new Map<string, RootCause>();

  constructor(private readonly o: ConsoleOptions) {}

  private print(line: string): void {
    this.clearBar();
    this.o.out(line + '\n');
    this.drawBar();
  }

  private clearBar(): void {
    if (this.barShown) {
      this.o.err('\r\x1b[2K');
      this.barShown = false;
    }
  }

  private drawBar(): void {
    if (!this.o.tty || this.bars.size === 0) return;
    const parts = [...this.bars].map(([t, b]) => {
      const pct = b.total > 0 ? Math.min(1, b.done / b.total) : 0;
      const fill = Math.round(pct * 20);
      return `${t} [${'#'.repeat(fill)}${'.'.repeat(20 - fill)}] ${Math.round(pct * 100)}% ${b.done}/${b.total}${b.unit ? ' ' + b.unit : ''}`;
    });
    this.o.err('\r\x1b[2K' + parts.join('  '));
    this.barShown = true;
  }

  emit(e: BuildEvent): void {
    switch (e.event) {
      case 'plan':
        this.dryRun = e.dryRun;
        if (this.o.verbose || e.dryRun) this.print(`rc1-build: ${e.targets.length} target${e.targets.length === 1 ? '' : 's'} in plan (profile ${e.profile}, -j ${e.jobs})${e.dryRun ? ', dry run' : ''}`);
        return;
      case 'explain': {
        if (e.root) {
          this.roots.set(e.target, e.root);
          const g = this.groups.get(e.root.label) ?? this.groups.set(e.root.label, { targets: [], cutoffs: [] }).get(e.root.label)!;
          g.targets.push(e.target);
        }
        const why = e.root ? rootText(e.root) : e.reasons[0];
        if (this.o.explain && this.o.verbose) for (const r of e.reasons.length ? e.reasons : [e.decision]) this.print(`rc1 explain: ${e.target}: ${r}`);
        else if (this.o.explain) this.print(`rc1 explain: ${e.target}: ${e.decision === 'up-to-date' ? e.decision : why ?? e.decision}`);
        else if (this.dryRun && e.decision !== 'up-to-date') {
          // A cascade in a dry run: the dependency that would run first, and the root it carries.
          const via = e.root?.via ?? [];
          const text = via.length ? `after ${via[via.length - 1]}: ${e.root!.label}${e.root!.more ? `, +${e.root!.more} more` : ''}` : why;
          this.print(`would ${e.decision === 'may-run' ? 'maybe run' : e.decision} ${e.target}${text ? ` (${text}${e.decision === 'may-run' ? '; early cutoff may keep it' : ''})` : ''}`);
        }
        return;
      }
      case 'start': {
        const root = this.roots.get(e.target);
        this.print(`run      ${e.target} (${root ? rootText(root) : `${e.reason}${e.reasons.length > 1 ? `, +${e.reasons.length - 1} more` : ''}`})`);
        return;
      }
      case 'restore': {
        const root = this.roots.get(e.target);
        this.print(`restore  ${e.target} from cache (${root ? rootText(root) : e.reason})`);
        return;
      }
      case 'skip':
        if (this.o.verbose) this.print(`fresh    ${e.target}`);
        return;
      case 'progress': {
        if (this.o.tty) {
          this.bars.set(e.target, { done: e.done, total: e.total, ...(e.unit ? { unit: e.unit } : {}), lastPct: 0 });
          this.drawBar();
        } else {
          const pct = e.total > 0 ? Math.floor((e.done / e.total) * 10) * 10 : 0;
          const b = this.bars.get(e.target);
          if (!b || pct > b.lastPct) {
            this.bars.set(e.target, { done: e.done, total: e.total, lastPct: pct });
            this.print(`progress ${e.target} ${pct}% (${e.done}/${e.total}${e.unit ? ' ' + e.unit : ''})`);
          }
        }
        return;
      }
      case 'log':
        if (this.o.verbose) this.print(`  ${e.target} | ${e.line}`);
        return;
      case 'done': {
        this.bars.delete(e.target);
        this.print(`${e.restored ? 'restored' : 'done    '} ${e.target} ${formatMs(e.ms)}${e.summary ? ` · ${e.summary}` : ''}`);
        const root = this.roots.get(e.target);
        if (e.unchanged && root) {
          this.groups.get(root.label)!.cutoffs.push(e.target);
          if (this.o.explain) this.print(`rc1 explain: early cutoff at ${e.target}: its outputs are unchanged, so what depends on it stays up to date`);
        }
        return;
      }
      case 'gate':
        if (e.pass) {
          const passed = e.checks.filter((c) => c.status === 'pass').length;
          const waived = e.checks.filter((c) => c.status === 'waived').length;
          const na = e.checks.filter((c) => c.status === 'n/a').length;
          this.print(`gate     ${e.target} ok: ${passed} passed${waived ? `, ${waived} WAIVED` : ''}${na ? `, ${na} n/a` : ''}${e.replayed ? ' (recorded)' : ''} · ${e.report}`);
          if (waived || na) for (const l of checksTable(e.checks.filter((c) => c.status === 'waived' || c.status === 'n/a'))) this.print(l);
        } else {
          this.print(`GATE FAILED ${e.target}${e.replayed ? ' (recorded result, inputs unchanged)' : ''} · report ${e.report}`);
          for (const l of checksTable(e.checks)) this.print(l);
          if (!e.checks.some((c) => c.status === 'fail')) this.print('    no check passed: checks that are n/a never make a gate pass on their own');
        }
        return;
      case 'fail':
        this.bars.delete(e.target);
        this.print(`FAILED   ${e.target}: ${e.error}`);
        if (e.lastLines?.length) for (const l of e.lastLines.slice(-10)) this.print(`  ${e.target} | ${l}`);
        if (e.log) this.print(`  see ${e.log}`);
        return;
      case 'blocked':
        this.print(e.by.startsWith('nothing') ? `not run  ${e.target} (the build stopped after a failure; -k keeps going)` : `blocked  ${e.target} (needs ${e.by})`);
        return;
      case 'warning':
        this.print(`warning: ${e.message}`);
        return;
      case 'recovered':
        this.print(`recovered ${e.targets.join(', ')} (outputs of an interrupted build moved into place)`);
        return;
      case 'remote': {
        this.bars.delete('remote cache upload');
        const r = e.stats;
        const parts = [`${r.hits} restored (${r.downloaded.objects} object${r.downloaded.objects === 1 ? '' : 's'}, ${formatBytes(r.downloaded.bytes)})`, `${r.misses} missed`];
        if (r.mode === 'readwrite') parts.push(`${r.uploaded.entries} uploaded (${r.uploaded.objects} object${r.uploaded.objects === 1 ? '' : 's'}, ${formatBytes(r.uploaded.bytes)})`);
        if (r.notUploaded.length) parts.push(`${r.notUploaded.length} not uploaded (non-deterministic)`);
        parts.push(`${r.refused} refused`);
        this.print(`remote   ${r.url} (${r.mode}): ${parts.join(', ')}${r.unavailable !== undefined ? ` · unavailable (${r.unavailable}): the rest of the build was local-only` : ''}`);
        return;
      }
      case 'end': {
        this.bars.clear();
        const c = e.counts;
        const parts = [`${c.ran} ran`, `${c.restored} restored`, `${c.upToDate} up to date`];
        if (c.failed) parts.push(`${c.failed} failed`);
        if (c.gateFailed) parts.push(`${c.gateFailed} gate${c.gateFailed > 1 ? 's' : ''} failed`);
        if (c.blocked) parts.push(`${c.blocked} blocked`);
        if (this.o.explain || this.dryRun) for (const l of this.rootSummary()) this.print(l);
        const head = e.interrupted ? 'INTERRUPTED' : e.ok ? 'ok' : 'FAILED';
        this.print(`rc1-build: ${head} · ${parts.join(', ')} · ${formatMs(e.ms)}`);
        return;
      }
      default: {
        const never: never = e;
        throw new Error(`internal error: unknown event ${JSON.stringify(never)}; please report`);
      }
    }
  }

  /** One line per root cause: how many targets it rebuilt (or would), which, and where early cutoff stopped it. */
  private rootSummary(): string[] {
    const out: string[] = [];
    const verb = this.dryRun ? 'would run' : 'ran';
    for (const [label, g] of this.groups) {
      const n = g.targets.length;
      const cut = g.cutoffs.length ? `; early cutoff at ${g.cutoffs.join(', ')}` : '';
      out.push(`rc1 explain: ${n} target${n === 1 ? '' : 's'} ${verb} because ${label}: ${g.targets.length > 12 ? `${g.targets.slice(0, 12).join(', ')}, … (+${n - 12})` : g.targets.join(', ')}${cut}`);
    }
    return out;
  }

  close(): void {
    this.clearBar();
  }
}

/** A root cause in one line: the target's own reason in full, or the upstream root and the targets it came through. */
export function rootText(r: RootCause): string {
  const more = r.more ? `, +${r.more} more` : '';
  return r.via.length ? `${r.label} (via ${r.via.join(' → ')})${more}` : `${formatReason(r.reason)}${more}`;
}

export class JsonReporter implements Reporter {
  constructor(private readonly out: (s: string) => void) {}
  emit(e: BuildEvent): void {
    this.out(JSON.stringify(e, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) + '\n');
  }
  close(): void {}
}
