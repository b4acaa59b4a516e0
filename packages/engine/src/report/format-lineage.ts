// Renders `rc1-build why` for people: the artifact, then its producing target and, indented
// under each input, the input's own producer, as deep as asked.
import type { Lineage, WhyAnswer } from '../rebuild/lineage.ts';

const short = (h: string): string => (h === 'missing' ? 'missing' : h.slice(0, 12));
const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? 'null';
  return s.length > 70 ? s.slice(0, 67) + '...' : s;
};

function statusLine(l: Lineage): string {
  const s = l.status;
  if (s.upToDate) return s.reasons.length ? s.reasons.join('; ') : 'up to date';
  const root = s.root
    ? `${s.root.label}${s.root.via.length ? ` (via ${s.root.via.join(' → ')})` : ''}${s.root.more ? `, +${s.root.more} more` : ''}`
    : (s.reasons[0] ?? 'stale');
  return `STALE: ${root}`;
}

function target(l: Lineage, pad: string, out: string[]): void {
  const rule = `${l.rule.path}${l.rule.name ? ` (${l.rule.name} v${l.rule.version})` : ''}`;
  const files = Object.keys(l.code).length;
  out.push(`${pad}${l.gate ? 'gate' : 'target'} ${l.target}`);
  const kv = (k: string, v: string): void => {
    out.push(`${pad}  ${k.padEnd(7)} ${v}`);
  };
  kv('rule', `${rule}, code ${short(l.codeHash)} (${files} file${files === 1 ? '' : 's'})`);
  if (l.built) {
    const run = l.built.run ? `, run ${l.built.run.id} (${l.built.run.command})` : '';
    kv(
      'built',
      `${l.built.at}, ${l.built.how === 'restored' ? 'restored from cache' : `ran ${l.built.ms}ms`}${l.built.result === 'gate-failed' ? ', gate FAILED' : ''}${run}`,
    );
  } else kv('built', 'never (inputs below are as they are now)');
  kv('status', statusLine(l));
  const params = Object.entries(l.params);
  if (!params.length) kv('params', '(none)');
  params.forEach(([k, v], i) => kv(i ? '' : 'params', `${k} = ${show(v)}`));
  Object.entries(l.args).forEach(([k, v], i) => kv(i ? '' : 'args', `${k} = ${show(v)}`));
  if (l.env.length) kv('env', l.env.map((e) => `${e.name}${e.set ? '' : ' (unset)'}`).join(', '));
  l.outputs.forEach((o, n) => kv(n ? '' : 'outputs', `${o.path}  ${short(o.sha256)}`));
  if (!l.inputs.length) kv('inputs', '(none)');
  l.inputs.forEach((i, n) => {
    kv(
      n ? '' : 'inputs',
      `${i.group}: ${i.path}  ${short(i.sha256)}  ${i.producer ? `← ${i.producer}${i.lineage === 'above' ? ' (shown above)' : ''}` : '(source)'}`,
    );
    if (i.lineage && i.lineage !== 'above') target(i.lineage, pad + '      ', out);
  });
}

export function formatWhy(a: WhyAnswer): string[] {
  const out: string[] = [];
  if (a.artifact) {
    const art = a.artifact;
    if (art.source) {
      out.push(`${art.path}  ${art.sha256 ? short(art.sha256) : 'missing'}  source file (no target produces it)`);
      out.push(`  read by ${art.readBy.length ? art.readBy.join(', ') : 'no target'}`);
      return out;
    }
    out.push(`${art.path}  ${art.sha256 ? short(art.sha256) : 'not built'}  output of ${a.lineage!.target}`);
  }
  if (a.lineage) target(a.lineage, '', out);
  return out;
}
