// `rc1-build graph [TARGET…]`: the target graph as Graphviz dot, Mermaid, or JSON; with TARGETs,
// the subgraph of those targets and what they need.
import { UsageError } from '../config/usage-error.ts';
import { closureOf } from '../graph/resolved.ts';
import { type Workspace, openWorkspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
}

const id = (n: string): string => n.replace(/[^\w]/g, '_');

export async function runGraph(
  root: string,
  format: string,
  io: Io,
  names: readonly string[] = [],
  opened?: Workspace,
): Promise<number> {
  if (!['dot', 'mermaid', 'json'].includes(format)) {
    throw new UsageError({ headline: `unknown graph format ${format}`, hint: 'use --format dot, mermaid or json' });
  }
  const ws = opened ?? (await openWorkspace(root));
  const keep = names.length ? new Set(closureOf(ws.pipeline, names)) : null;
  const targets = ws.pipeline.order.filter((n) => !keep || keep.has(n)).map((n) => ws.pipeline.targets.get(n)!);
  ws.saveCaches();
  if (format === 'json') {
    io.out(
      JSON.stringify(
        {
          targets: targets.map((t) => ({
            name: t.name,
            rule: t.rule,
            gate: t.gate,
            deps: t.deps,
            outputs: t.outputs.map((o) => (o.dir ? `${o.path}/` : o.path)),
            inputs: Object.fromEntries(t.inputs.map((g) => [g.group, g.items])),
            params: t.params,
            env: t.env,
            ...(t.report ? { report: t.report } : {}),
            ...(t.description ? { description: t.description } : {}),
          })),
          defaultTargets: ws.pipeline.defaultTargets,
          ...(keep ? { subgraphOf: names } : {}),
        },
        null,
        2,
      ) + '\n',
    );
  } else if (format === 'dot') {
    const lines = ['digraph rc1 {', '  rankdir=LR;', '  node [shape=box, fontname="Helvetica"];'];
    for (const t of targets)
      lines.push(`  ${JSON.stringify(t.name)}${t.gate ? ' [shape=diamond, style=filled, fillcolor="#ffe9a8"]' : ''};`);
    for (const t of targets) for (const d of t.deps) lines.push(`  ${JSON.stringify(d)} -> ${JSON.stringify(t.name)};`);
    lines.push('}');
    io.out(lines.join('\n') + '\n');
  } else {
    const lines = ['flowchart LR'];
    for (const t of targets)
      lines.push(`  ${id(t.name)}${t.gate ? `{${JSON.stringify(t.name)}}` : `[${JSON.stringify(t.name)}]`}`);
    for (const t of targets) for (const d of t.deps) lines.push(`  ${id(d)} --> ${id(t.name)}`);
    io.out(lines.join('\n') + '\n');
  }
  return 0;
}
