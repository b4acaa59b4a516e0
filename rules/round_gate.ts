// round1 / round2_pass (docs/rc1.md): one rule, args.round 1 or 2
// (lib/evaluation/rounds.ts: what each round re-states and checks).
// Input groups:
//   reports    the gate targets of the round (preflight.rounds.round<N> lists them); each JSON file
//              that is a gate report is re-stated; any other file they bring (configs/weights.json)
//              is vouched for as an artifact
//   artifacts  the files the round vouches for by sha256 (data, configs/ppo_scale.yaml, …)
//   round1     (round 2 only) the round-1 report
// Output [0]: the round's report (reports/preflight/round1.json, round2_pass.json): every check
// with its value, the sha256 of every vouched file, the waived checks. No timestamp, so the same
// inputs give the same bytes (the manifest records when it was built).
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { defineRule, RuleError } from 'rc1-build';
import {
  parseGateReport,
  preflightSchema,
  round1,
  round2,
  sha256Of,
  type Artifact,
  type GateReport,
} from '../lib/evaluation/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'round_gate',
  version: 1,
  params: z.object({ preflight: z.object({ rounds: preflightSchema.shape.rounds }) }),
  async run(ctx) {
    const round = ctx.args.round;
    if (round !== 1 && round !== 2)
      throw new RuleError(`${ctx.target}: args.round must be 1 or 2, got ${JSON.stringify(round)}`);
    const reports: GateReport[] = [];
    const artifacts: Artifact[] = [];
    const read = (file: string, asReport: boolean): GateReport | null => {
      const bytes = readFileSync(file);
      const path = relative(ctx.root, file);
      const sha256 = sha256Of(bytes);
      const rep = asReport ? parseGateReport(path, sha256, bytes.toString('utf8')) : null;
      if (!rep) artifacts.push({ path, sha256, bytes: statSync(file).size });
      return rep;
    };
    for (const f of ctx.inputs('reports')) {
      const r = read(f, true);
      if (r) reports.push(r);
    }
    for (const f of ctx.inputs('artifacts')) read(f, false);
    artifacts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const required = round === 1 ? ctx.params.preflight.rounds.round1 : ctx.params.preflight.rounds.round2;
    ctx.progress(1, 2, 'steps');

    let res: { checks: import('rc1-build').Check[]; report: Record<string, unknown> };
    if (round === 1) res = round1({ profile: ctx.profile, reports, artifacts, required });
    else {
      const files = ctx.inputs('round1');
      const bytes = files.length === 1 ? readFileSync(files[0]!) : null;
      const r1 = bytes ? parseGateReport(relative(ctx.root, files[0]!), sha256Of(bytes), bytes.toString('utf8')) : null;
      if (!r1)
        throw new RuleError(
          `${ctx.target}: the round1 input group must hold the round-1 report (one gate report JSON)`,
        );
      const vouched = (JSON.parse(bytes!.toString('utf8')) as { vouched?: Record<string, string> }).vouched;
      if (!vouched)
        throw new RuleError(`${relative(ctx.root, files[0]!)}: no "vouched" map: not a round-1 report of this rule`);
      res = round2({ profile: ctx.profile, reports, artifacts, required, round1: r1, round1Vouched: vouched });
    }
    ctx.progress(2, 2, 'steps');
    const failed = res.checks.filter((c) => c.status === 'fail').length;
    const waived = res.checks.filter((c) => c.status === 'waived').length;
    const na = res.checks.filter((c) => c.status === 'n/a').length;
    return {
      checks: res.checks,
      report: res.report,
      summary: `round ${round}: ${reports.length} reports, ${res.checks.length} checks (${failed} failed, ${waived} waived, ${na} n/a), ${artifacts.length} artifacts vouched for`,
    };
  },
});
