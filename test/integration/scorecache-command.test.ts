// `rc1-build scorecache …`, a command the pipeline declares, reads its settings from the config
// the engine resolved (configs/*.yaml and the profile's overlay): one config loader, so a YAML
// error is the engine's usage error with file and line, never skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestRig } from '../helpers/rig.ts';

function rig(): TestRig {
  return new TestRig({
    'rc1.build.ts': `import { definePipeline } from 'rc1-build';
export default definePipeline({
  profiles: ['dev', 'prod'], defaultProfile: 'dev', freeFormConfig: ['scoring_live'],
  commands: { scorecache: { module: 'lib/scoring/cache-cli.ts', summary: 'the judge score cache' } },
  targets: [],
});
`,
    'configs/scoring_live.yaml': 'scoring_live:\n  cache:\n    path: state/dev.sqlite\n    ttl_days: 7\n',
    'configs/profiles/prod.yaml': 'scoring_live:\n  cache:\n    path: state/prod.sqlite\n',
  }).withRc1Lib();
}

test('scorecache reads scoring_live.cache from the config of the profile in force', () => {
  const r = rig();
  try {
    let c = r.run(['scorecache', 'stat']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout, 'no score cache at state/dev.sqlite: nothing has been scored yet\n');
    c = r.run(['scorecache', 'stat'], { RUN_MODE: 'prod' });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout, 'no score cache at state/prod.sqlite: nothing has been scored yet\n');
  } finally {
    r.cleanup();
  }
});

test('a YAML error in a config stops scorecache with the file and line; a bad cache setting names its key', () => {
  const r = rig();
  try {
    r.write('configs/scoring_live.yaml', 'scoring_live:\n  cache:\n    path: [state/dev.sqlite\n    ttl_days: 7\n');
    let c = r.run(['scorecache', 'stat']);
    assert.equal(c.code, 64, c.stdout + c.stderr);
    assert.match(c.stderr, /configs\/scoring_live\.yaml:\d+/);
    r.write('configs/scoring_live.yaml', 'scoring_live:\n  cache:\n    path: state/dev.sqlite\n    ttl_days: -1\n');
    c = r.run(['scorecache', 'stat']);
    assert.equal(c.code, 64, c.stdout + c.stderr);
    assert.match(c.stderr, /scoring_live\.cache\.ttl_days: .*\(configs\/\*\.yaml\)/);
  } finally {
    r.cleanup();
  }
});
