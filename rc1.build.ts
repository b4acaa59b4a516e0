// The RC1 pipeline (see ../shared/RC1.md in the design docs and the README): declarations only.
// Rules live in rules/ and are loaded lazily, only when their target runs. Later stages (seed
// pool, scoring, calibration, preflight, train) are declared as their rules land.
//
//   data/raw/** --> shadow_set --> data/shadow_eval_245.jsonl, reports/rc1/sample_manifest.json
import { definePipeline, defineTarget } from 'rc1-build';

export default definePipeline({
  // `train` becomes the default once it exists; until then the furthest target that does.
  defaultTargets: ['shadow_set'],
  targets: [
    defineTarget({
      name: 'shadow_set',
      description: '245 held-aside evaluation scenarios, stratified by task (hotpotqa .45 / strategyqa .30 / gsm8k .25), seed 20250820',
      rule: 'rules/shadow_set.ts',
      inputs: { raw: ['data/raw/gsm8k/*.jsonl', 'data/raw/hotpotqa/*.jsonl', 'data/raw/strategyqa/*.jsonl'] },
      outputs: ['data/shadow_eval_245.jsonl', 'reports/rc1/sample_manifest.json'],
      params: ['shadow', 'data'],
    }),
  ],
});
