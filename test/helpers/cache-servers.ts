// Real cache servers for the remote-cache tests, started by the scripts in test/servers/ on this
// helper's ports (nginx 19090+, Ceph RGW 17480 / mon 16789). A server whose package is missing
// skips the test locally, and fails it in CI (CI=true): .ci/run installs the packages.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { REPO } from './rig.ts';

const SERVERS = path.join(REPO, 'test', 'servers');

/** Whether `bin` is installed; if not: fail in CI, skip (with the reason) elsewhere. */
export function needServer(t: TestContext, bin: string, apt: string): boolean {
  if (spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0) return true;
  const why = `${bin} is not installed (apt-get install -y --no-install-recommends ${apt})`;
  if (process.env.CI === 'true') throw new Error(`${why}: CI must install it (.ci/run)`);
  t.skip(why);
  return false;
}

export interface Nginx {
  url: string;
  dir: string;
  store: string;
  pid: number;
  stop(): void;
  workers(): number[];
}

let nextPort = 19090;

/** `port`: a fixed port (default: the next of 19090, 19091, …); `accessLog`: log every request to <dir>/access.log. */
export function startNginx(opts: { authHeader?: string; port?: number; accessLog?: boolean } = {}): Nginx {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-nginx-'));
  const port = opts.port ?? nextPort++;
  const out = execFileSync('bash', [path.join(SERVERS, 'nginx-up.sh')], {
    env: {
      ...process.env,
      DIR: dir,
      PORT: String(port),
      ...(opts.authHeader ? { AUTH_HEADER: opts.authHeader } : {}),
      ...(opts.accessLog ? { ACCESS_LOG: '1' } : {}),
    },
    encoding: 'utf8',
  });
  const pid = Number(out.trim().split('\n').pop());
  return {
    url: `http://127.0.0.1:${port}`,
    dir,
    store: path.join(dir, 'store'),
    pid,
    workers: () =>
      spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map(Number),
    stop: () => {
      execFileSync('bash', [path.join(SERVERS, 'nginx-down.sh')], { env: { ...process.env, DIR: dir } });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CephRgw {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  dir: string;
  stop(): void;
}

/** A single-node Ceph with radosgw (test/servers/ceph-rgw-up.sh): ~13 s to start. */
export function startCephRgw(): CephRgw {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rc1-ceph-'));
  try {
    execFileSync('bash', [path.join(SERVERS, 'ceph-rgw-up.sh')], {
      env: { ...process.env, DIR: dir, RGW_PORT: '17480', MON_PORT: '16789' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } catch (e) {
    execFileSync('bash', [path.join(SERVERS, 'ceph-rgw-down.sh')], { env: { ...process.env, DIR: dir } });
    throw e;
  }
  return {
    endpoint: 'http://127.0.0.1:17480',
    accessKey: 'rc1access',
    secretKey: 'rc1secretkey',
    dir,
    stop: () => {
      execFileSync('bash', [path.join(SERVERS, 'ceph-rgw-down.sh')], { env: { ...process.env, DIR: dir } });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
