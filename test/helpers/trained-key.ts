// The cache key of the shared trained policy (trainedPpoRig in test/integration/ppo-eval-rig.ts):
// a digest of every source the cached build can read, in the rig's workspace (lib/, rules/,
// configs/, templates/, data/raw/), in the test process that writes that workspace (the rig itself,
// test/helpers/: shadowSetJsonl() builds the shadow set with the repo's rc1.build.ts, the training
// scenarios come from lib/ and configs/ read by the rig, createRng from packages/engine/src) and in
// the CLI it runs (the whole engine package: src/, bin/, dist/), plus the dependencies
// (package.json, package-lock.json), tsconfig.json (tsx reads it), examples/ and the run's size,
// and the checkout's own real path: the build's state records the absolute paths of the code it
// imported (the engine, node_modules), so a build made in another checkout with the same sources is
// stale here (a fresh clone at another path once picked up such an entry from a shared /tmp).
// test/unit/shared-build.test.ts checks that every repository file the rig imports, directly or
// not, lies under one of these paths.
import * as fs from 'node:fs';
import { treeDigest } from './shared-build.ts';

export const TRAINED_KEY_INPUTS = [
  'rc1.build.ts',
  'lib',
  'rules',
  'configs',
  'templates',
  'data/raw',
  'examples',
  'packages/engine',
  'test/helpers',
  'test/integration/ppo-eval-rig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
] as const;

/** The key of the shared trained policy of `size` built from the tree at `root` (the checkout's real path included). */
export function trainedKey(root: string, size: object): string {
  return treeDigest(root, TRAINED_KEY_INPUTS, JSON.stringify({ root: fs.realpathSync(root), size }));
}
