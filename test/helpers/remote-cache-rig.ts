// Workspaces that share a remote cache: the standard test pipeline (helpers/rig.ts) plus a
// directory output, declared with a remoteCache block, and the keys and token the tests use.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateSigningKey } from '../../packages/engine/src/cache/remote/signing.ts';
import { COPY_RULE, GATE_RULE, PIPELINE, SQUEEZE_RULE, TestRig } from './rig.ts';

export const CI_KEY = generateSigningKey();
export const TOKEN = 'Bearer rc1-test-token-5f1d2a';

/** A rule with a directory output (two files and a symlink), counted like the others. */
export const DIR_RULE = `import { defineRule } from 'rc1-build';
import * as fs from 'node:fs';
import * as path from 'node:path';
export default defineRule({
  name: 'tree', version: 1,
  run(ctx) {
    if (process.env.RC1_TEST_COUNTER) fs.appendFileSync(process.env.RC1_TEST_COUNTER, ctx.target + '\\n');
    const dir = ctx.output('out/tree/');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    const text = ctx.inputs('src').map((p) => fs.readFileSync(p, 'utf8')).join('');
    fs.writeFileSync(path.join(dir, 'sub', 'one.txt'), text);
    fs.writeFileSync(path.join(dir, 'two.bin'), Buffer.alloc(3 << 20, text));
    fs.symlinkSync('sub/one.txt', path.join(dir, 'latest'));
  },
});
`;

export const TARGETS = ['a', 'after_gate', 'after_sq', 'b', 'c', 'g', 'sq', 'tree'];

export interface RemoteDecl {
  url: string;
  mode?: string;
  timeoutMs?: number;
  trusted?: Record<string, string>;
  auth?: boolean;
  s3?: Record<string, unknown>;
  extraTargets?: string;
}

export function remotePipeline(d: RemoteDecl): string {
  const block = JSON.stringify({
    url: d.url,
    ...(d.mode ? { mode: d.mode } : {}),
    ...(d.timeoutMs ? { timeoutMs: d.timeoutMs } : {}),
    ...(d.auth === false ? {} : { authHeader: { env: 'RC1_CACHE_TOKEN' } }),
    ...(d.s3 ? { s3: d.s3 } : {}),
    signingKeyEnv: 'RC1_CACHE_SIGNING_KEY',
    trustedKeys: d.trusted ?? { ci: CI_KEY.publicKey },
  });
  return PIPELINE.replace('definePipeline({', `definePipeline({ remoteCache: ${block},`)
    .replace(
      "defaultTargets: ['after_gate', 'c', 'after_sq']",
      "defaultTargets: ['after_gate', 'c', 'after_sq', 'tree']",
    )
    .replace(
      '  ],\n});',
      `    defineTarget({ name: 'tree', rule: 'rules/tree.ts', inputs: { src: 'src/c.txt' }, outputs: ['out/tree/'] }),\n${d.extraTargets ?? ''}  ],\n});`,
    );
}

export function remoteRig(d: RemoteDecl, extra: Record<string, string> = {}): TestRig {
  return new TestRig({
    'rc1.build.ts': remotePipeline(d),
    'rules/copy.ts': COPY_RULE,
    'rules/squeeze.ts': SQUEEZE_RULE,
    'rules/gate.ts': GATE_RULE,
    'rules/tree.ts': DIR_RULE,
    'configs/default.yaml': 'copy:\n  suffix: "!"\ngate:\n  min: 3\nunrelated: 1\n',
    'src/a.txt': 'hello\n',
    'src/c.txt': 'cee\n',
    'src/w.txt': 'some   words\n',
    ...extra,
  });
}

/** The environment of a writer holding the CI key and the token. */
export const WRITER_ENV = { RC1_CACHE_SIGNING_KEY: CI_KEY.privateKey, RC1_CACHE_TOKEN: TOKEN };
/** A reader: the token, no signing key. */
export const READER_ENV = { RC1_CACHE_TOKEN: TOKEN };

/** Every file under dir (recursively) whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Every fingerprint key, by target, as the manifest records it. */
export function keysOf(rig: TestRig): Record<string, string> {
  const m = JSON.parse(rig.read('reports/build/manifest.json')) as { targets: Record<string, { key: string }> };
  return Object.fromEntries(Object.entries(m.targets).map(([n, t]) => [n, t.key]));
}
