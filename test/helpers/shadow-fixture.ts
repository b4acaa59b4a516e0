// The shadow set as the pipeline builds it, for tests that need the held-out scenarios: built once
// per test process by the real CLI (`rc1-build shadow_set`) in a temporary copy of the project, so
// tests never depend on generated files lying in the working tree (a fresh clone has none).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, REPO } from './rig.ts';

let cached: string | null = null;

/** The text of data/shadow_eval_245.jsonl as `rc1-build shadow_set` writes it. */
export function shadowSetJsonl(): string {
  if (cached !== null) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-shadow-fixture-'));
  try {
    for (const p of ['rc1.build.ts', 'rules', 'lib', 'configs', 'data/raw', 'templates'])
      fs.cpSync(path.join(REPO, p), path.join(dir, p), { recursive: true });
    const r = spawnSync(process.execPath, [CLI, 'shadow_set'], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`rc1-build shadow_set failed (${r.status}): ${r.stdout}${r.stderr}`);
    cached = fs.readFileSync(path.join(dir, 'data/shadow_eval_245.jsonl'), 'utf8');
    return cached;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
