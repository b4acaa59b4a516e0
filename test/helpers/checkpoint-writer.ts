// A child process for the SIGKILL test (test/unit/train-checkpoints.test.ts): writes checkpoints
// to argv[2] forever — step dirs with files of random sizes, `latest` swapped after each, best/
// replaced every third step, keep-last-3 rotation — continuing from the step `latest` names.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  latestTarget,
  repairCheckpointDir,
  rotate,
  saveBest,
  updateLatest,
  writeCheckpoint,
} from '../../lib/train/checkpoints.ts';

const dir = process.argv[2]!;
await repairCheckpointDir(dir);
const latest = await latestTarget(dir);
let step = latest ? Number(/(\d+)$/.exec(latest)![1]) : 0;
process.stdout.write('ready\n');
for (;;) {
  step += 1;
  const info = await writeCheckpoint(
    dir,
    step,
    {
      format: 'rc1-train-checkpoint-v1',
      config_hash: 'c'.repeat(64),
      engine: 'tfjs',
      strategy: 'ppo',
      backend: 'wasm',
      state: { step },
    },
    async (d) => {
      await writeFile(join(d, 'model.bin'), randomBytes(1 + Math.floor(Math.random() * 300_000)));
      await writeFile(join(d, 'optimizer.bin'), randomBytes(1 + Math.floor(Math.random() * 300_000)));
    },
  );
  await updateLatest(dir, `step_${String(step).padStart(5, '0')}`);
  if (step % 3 === 0) await saveBest(dir, info.dir, { step });
  await rotate(dir, 3);
}
