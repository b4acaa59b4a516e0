// Renders build events for people. Progress of long rules is a live display on a terminal
// (stderr): one bar per running target, each line cut to the terminal's width so nothing wraps;
// plain lines at every 10 % otherwise. A waived check is listed once per build (later gates
// that waive it say so in their count); blocked targets are summarised in one line at the end.
// Colours (util/colour.ts) only on a terminal or under FORCE_COLOR. Output is golden-tested:
// keep formats stable.
import type { Check } from '../api/index.ts';
import type { BuildEvent, Reporter } from './events.ts';
import type { RootCause } from '../rebuild/root-cause.ts';
import { formatReason } from '../hash/fingerprint.ts';
import { type Paint, painter } from '../util/colour.ts';
import { formatMs } from '../util/timing.ts';

export interface ConsoleOptions {
  explain: boolean;
  verbose: boolean;
  tty: boolean;
  out: (s: string) => void;
  err: (s: string) => void;
  /** Colour the output (stdout's decision: colourEnabled(process.stdout)). */
  colour?: boolean;
  /** The terminal's width for the progress display (default 80). */
  columns?: () => number | undefined;
}

interface Bar {
  done: number;
  total: number;
  unit?: string;
  lastPct: number;
}

/** One progress line of at most `width` characters: `name [####....] 45% 9/20 steps`. */
export function barLine(name: string, b: Bar, width: number): string {
  const pct = b.total > 0 ? Math.min(1, b.done / b.total) : 0;
  const suffix = ` ${Math.round(pct * 100)}% ${b.done}/${b.total}${b.unit ? ' ' + b.unit : ''}`;
  let label = name;
  const room = width - suffix.length - 3; // ' [' and ']'
  if (label.length + 8 > room) label = room - 8 > 1 ? `${label.slice(0, room - 9)}…` : '';
  const cells = Math.max(0, Math.min(20, room - label.length));
  const fill = Math.round(pct * cells);
  const line = `${label}${label ? ' ' : ''}[${'#'.repeat(fill)}${'.'.repeat(cells - fill)}]${suffix}`;
  return line.length > width ? line.slice(0, Math.max(0, width)) : line;
}

function fmtValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  if (Array.isArray(v)) return `[${v.map(fmtValue).join(', ')}]`;
  return JSON.stringify(v) ?? 'null';
}

/** The checks table printed for a gate (also used by `status`). */
export function checksTable(checks: readonly Check[]): string[] {
  const result = (c: Check): string =>
    c.status === 'waived'
      ? `WAIVED (${c.waived ?? ''})`
      : c.status === 'n/a'
        ? `n/a (${c.not_applicable ?? ''})`
        : c.status === 'pass'
          ? 'pass'
          : 'FAIL';
  const rows = checks.map((c) => [c.name, fmtValue(c.value), c.op, fmtValue(c.threshold), result(c)]);
  const head = ['check', 'value', 'op', 'threshold', 'result'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    '    ' +
    r
      .map((c, i) => c.padEnd(w[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(head)];
  checks.forEach((c, i) => {
    out.push(line(rows[i]!));
    if (c.status === 'fail' && c.hint) out.push(`      hint: ${c.hint}`);
  });
  return out;
}

export function formatBytes(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export class ConsoleReporter implements Reporter {
  private bars = new Map<string, Bar>();
  /** Lines of the progress display now on the terminal (0: none). */
  private barLines = 0;
  private readonly paint: Paint;
  /** Waived checks already listed in this build (name and reason). */
  private waivedSeen = new Set<string>();
  /** Blocked targets and the dependency each waited for; targets not run after a failure. */
  private blocked: { target: string; by: string }[] = [];
  private notRun: string[] = [];
  private dryRun = false;
  /** Root cause → the targets it rebuilt (in order) and where early cutoff stopped it. */
  private groups = new Map<string, { targets: string[]; cutoffs: string[] }>();
  private roots = new Map<string, RootCause>();

  constructor(private readonly o: ConsoleOptions) {
    this.paint = painter(o.colour === true);
  }

  private print(line: string): void {
    this.clearBar();
    this.o.out(line + '\n');
    this.drawBar();
  }

  private clearBar(): void {
    if (this.barLines > 0) {
      // clear the last line, then each line above it, ending at the first line's start
      this.o.err('\r\x1b[2K' + '\x1b[1A\x1b[2K'.repeat(this.barLines - 1));
      this.barLines = 0;
    }
  }

  private drawBar(): void {
    if (!this.o.tty || this.bars.size === 0) return;
    this.clearBar();
    // one character short of the width: a full line would leave the cursor in the pending wrap
    const width = Math.max(10, (this.o.columns?.() || 80) - 1);
    const lines = [...this.bars].map(([t, b]) => barLine(t, b, width));
    this.o.err(lines.join('\n'));
    this.barLines = lines.length;
  }

  emit(e: BuildEvent): void {
    switch (e.event) {
      case 'plan':
        this.dryRun = e.dryRun;
        if (this.o.verbose || e.dryRun)
          this.print(
            `rc1-build: ${e.targets.length} target${e.targets.length === 1 ? '' : 's'} in plan (profile ${e.profile}, -j ${e.jobs})${e.dryRun ? ', dry run' : ''}`,
          );
        return;
      case 'explain': {
        if (e.root) {
          this.roots.set(e.target, e.root);
          const g =
            this.groups.get(e.root.label) ??
            this.groups.set(e.root.label, { targets: [], cutoffs: [] }).get(e.root.label)!;
          g.targets.push(e.target);
        }
        const why = e.root ? rootText(e.root) : e.reasons[0];
        if (this.o.explain && this.o.verbose)
          for (const r of e.reasons.length ? e.reasons : [e.decision]) this.print(`rc1 explain: ${e.target}: ${r}`);
        else if (this.o.explain)
          this.print(`rc1 explain: ${e.target}: ${e.decision === 'up-to-date' ? e.decision : (why ?? e.decision)}`);
        else if (this.dryRun && e.decision !== 'up-to-date') {
          // A cascade in a dry run: the dependency that would run first, and the root it carries.
          const via = e.root?.via ?? [];
          const text = via.length
            ? `after ${via[via.length - 1]}: ${e.root!.label}${e.root!.more ? `, +${e.root!.more} more` : ''}`
            : why;
          this.print(
            `would ${e.decision === 'may-run' ? 'maybe run' : e.decision} ${e.target}${text ? ` (${text}${e.decision === 'may-run' ? '; early cutoff may keep it' : ''})` : ''}`,
          );
        }
        return;
      }
      case 'start': {
        const root = this.roots.get(e.target);
        this.print(
          `run      ${e.target} (${root ? rootText(root) : `${e.reason}${e.reasons.length > 1 ? `, +${e.reasons.length - 1} more` : ''}`})`,
        );
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
        this.print(
          `${e.restored ? 'restored' : 'done    '} ${e.target} ${formatMs(e.ms)}${e.summary ? ` · ${e.summary}` : ''}`,
        );
        const root = this.roots.get(e.target);
        if (e.unchanged && root) {
          this.groups.get(root.label)!.cutoffs.push(e.target);
          if (this.o.explain)
            this.print(
              `rc1 explain: early cutoff at ${e.target}: its outputs are unchanged, so what depends on it stays up to date`,
            );
        }
        return;
      }
      case 'gate':
        if (e.pass) {
          const passed = e.checks.filter((c) => c.status === 'pass').length;
          const waived = e.checks.filter((c) => c.status === 'waived').length;
          const na = e.checks.filter((c) => c.status === 'n/a').length;
          const key = (c: Check): string => `${c.name}\0${c.waived ?? ''}`;
          const listed = e.checks.filter((c) => c.status === 'waived' && this.waivedSeen.has(key(c))).length;
          const show = e.checks.filter(
            (c) => (c.status === 'waived' && !this.waivedSeen.has(key(c))) || c.status === 'n/a',
          );
          for (const c of show) if (c.status === 'waived') this.waivedSeen.add(key(c));
          const waivedText = waived
            ? this.paint(
                'yellow',
                `${waived} WAIVED${listed ? ` (${listed === waived ? '' : `${listed} `}as listed above)` : ''}`,
              )
            : '';
          this.print(
            `gate     ${e.target} ${this.paint('green', 'ok')}: ${passed} passed${waived ? `, ${waivedText}` : ''}${na ? `, ${na} n/a` : ''}${e.replayed ? ' (recorded)' : ''} · ${e.report}`,
          );
          if (show.length) for (const l of checksTable(show)) this.print(l);
        } else {
          for (const c of e.checks) if (c.status === 'waived') this.waivedSeen.add(`${c.name}\0${c.waived ?? ''}`);
          this.print(
            `${this.paint(['bold', 'red'], 'GATE FAILED')} ${e.target}${e.replayed ? ' (recorded result, inputs unchanged)' : ''} · report ${e.report}`,
          );
          for (const l of checksTable(e.checks)) this.print(l);
          if (!e.checks.some((c) => c.status === 'fail'))
            this.print('    no check passed: checks that are n/a never make a gate pass on their own');
        }
        return;
      case 'fail':
        this.bars.delete(e.target);
        this.print(`${this.paint(['bold', 'red'], 'FAILED')}   ${e.target}: ${e.error}`);
        if (e.lastLines?.length) for (const l of e.lastLines.slice(-10)) this.print(`  ${e.target} | ${l}`);
        if (e.log) this.print(`  see ${e.log}`);
        return;
      case 'blocked':
        if (e.by.startsWith('nothing')) this.notRun.push(e.target);
        else this.blocked.push({ target: e.target, by: e.by });
        return;
      case 'warning':
        this.print(`${this.paint('yellow', 'warning')}: ${e.message}`);
        return;
      case 'recovered':
        this.print(`recovered ${e.targets.join(', ')} (outputs of an interrupted build moved into place)`);
        return;
      case 'remote': {
        this.bars.delete('remote cache upload');
        const r = e.stats;
        const parts = [
          `${r.hits} restored (${r.downloaded.objects} object${r.downloaded.objects === 1 ? '' : 's'}, ${formatBytes(r.downloaded.bytes)})`,
          `${r.misses} missed`,
        ];
        if (r.mode === 'readwrite')
          parts.push(
            `${r.uploaded.entries} uploaded (${r.uploaded.objects} object${r.uploaded.objects === 1 ? '' : 's'}, ${formatBytes(r.uploaded.bytes)})`,
          );
        if (r.notUploaded.length) parts.push(`${r.notUploaded.length} not uploaded (non-deterministic)`);
        parts.push(`${r.refused} refused`);
        this.print(
          `remote   ${r.url} (${r.mode}): ${parts.join(', ')}${r.unavailable !== undefined ? ` · unavailable (${r.unavailable}): the rest of the build was local-only` : ''}`,
        );
        return;
      }
      case 'end': {
        this.bars.clear();
        const c = e.counts;
        const parts = [`${c.ran} ran`, `${c.restored} restored`, `${c.upToDate} up to date`];
        if (c.failed) parts.push(`${c.failed} failed`);
        if (c.gateFailed) parts.push(`${c.gateFailed} gate${c.gateFailed > 1 ? 's' : ''} failed`);
        if (c.blocked) parts.push(`${c.blocked} blocked`);
        for (const l of this.blockedSummary()) this.print(l);
        if (this.o.explain || this.dryRun) for (const l of this.rootSummary()) this.print(l);
        const head = e.interrupted
          ? this.paint(['bold', 'yellow'], 'INTERRUPTED')
          : e.ok
            ? this.paint(['bold', 'green'], 'ok')
            : this.paint(['bold', 'red'], 'FAILED');
        this.print(`rc1-build: ${head} · ${parts.join(', ')} · ${formatMs(e.ms)}`);
        return;
      }
      default: {
        const never: never = e;
        throw new Error(`internal error: unknown event ${JSON.stringify(never)}; please report`);
      }
    }
  }

  /**
   * Blocked targets in one line, by the failed target each waits for (through blocked ones):
   * `blocked  after_gate (needs g)`, or `blocked  27 targets behind g: a, b, … (+19)`; targets not
   * run after a failure (without -k) in one more. Names in alphabetical order.
   */
  private blockedSummary(): string[] {
    const out: string[] = [];
    const list = (names: string[]): string =>
      names.length > 8 ? `${names.slice(0, 8).join(', ')}, … (+${names.length - 8})` : names.join(', ');
    const tag = (t: string): string => this.paint('red', t);
    if (this.blocked.length === 1)
      out.push(`${tag('blocked')}  ${this.blocked[0]!.target} (needs ${this.blocked[0]!.by})`);
    else if (this.blocked.length > 1) {
      const by = new Map(this.blocked.map((b) => [b.target, b.by]));
      const rootOf = (t: string): string => {
        let r = by.get(t)!;
        for (let i = 0; by.has(r) && i < by.size; i++) r = by.get(r)!;
        return r;
      };
      const groups = new Map<string, string[]>();
      for (const b of [...this.blocked].sort((x, y) => (x.target < y.target ? -1 : 1)))
        (groups.get(rootOf(b.target)) ?? groups.set(rootOf(b.target), []).get(rootOf(b.target))!).push(b.target);
      const parts = [...groups].map(([root, names]) =>
        groups.size === 1 ? `behind ${root}: ${list(names)}` : `${names.length} behind ${root} (${list(names)})`,
      );
      out.push(
        `${tag('blocked')}  ${this.blocked.length} targets ${groups.size === 1 ? parts[0] : `: ${parts.join('; ')}`}`.replace(
          ' targets : ',
          ' targets: ',
        ),
      );
    }
    this.notRun.sort();
    if (this.notRun.length) {
      out.push(
        `not run  ${this.notRun.length === 1 ? this.notRun[0] : `${this.notRun.length} targets: ${list(this.notRun)}`} (the build stopped after a failure; -k keeps going)`,
      );
    }
    this.blocked = [];
    this.notRun = [];
    return out;
  }

  /** One line per root cause: how many targets it rebuilt (or would), which, and where early cutoff stopped it. */
  private rootSummary(): string[] {
    const out: string[] = [];
    const verb = this.dryRun ? 'would run' : 'ran';
    for (const [label, g] of this.groups) {
      const n = g.targets.length;
      const cut = g.cutoffs.length ? `; early cutoff at ${g.cutoffs.join(', ')}` : '';
      out.push(
        `rc1 explain: ${n} target${n === 1 ? '' : 's'} ${verb} because ${label}: ${g.targets.length > 12 ? `${g.targets.slice(0, 12).join(', ')}, … (+${n - 12})` : g.targets.join(', ')}${cut}`,
      );
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
