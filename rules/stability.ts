// stability (docs/rc1.md `scores`): the share of unstable or failed scored
// items (K = 3 judge samples whose variance exceeds scoring.aggregate.unstable_variance) must
// stay within scoring.stability.max_unstable_share. One gate per scale stage, so a stage's pool
// is not grown further while its scores are unstable. Input group `scores`: the stage's
// scores.jsonl (other files of the scores target are passed over). Output: the report.
import { check, defineRule } from 'rc1-build';
import { readScores, stabilityCheck } from '../lib/scoring/index.ts';
import { z } from 'zod';

export default defineRule({
  name: 'stability',
  version: 1,
  params: z.object({
    scoring: z.object({ stability: z.object({ max_unstable_share: z.number().min(0).max(1) }).strict() }).strict(),
  }),
  async run(ctx) {
    const file = ctx.input('scores');
    const records = await readScores(file);
    const unstable = records.filter((r) => r.unstable).length;
    const failed = records.filter((r) => r.status === 'failed').length;
    const threshold = ctx.params.scoring.stability.max_unstable_share;
    ctx.progress(1, 1);
    return {
      checks: [
        stabilityCheck(records, threshold),
        check('items_scored', records.length, '>', 0, 'no scored items: build the scores target first'),
      ],
      report: {
        items: records.length,
        unstable,
        failed,
        definition:
          'unstable_share = (unstable + failed items) / items; an item is unstable when the largest per-dimension population variance of its K judge samples exceeds scoring.aggregate.unstable_variance',
      },
      summary: `${unstable} unstable and ${failed} failed of ${records.length} scored items`,
    };
  },
});
