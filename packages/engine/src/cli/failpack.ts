// `rc1-build failpack`: packs what a person needs to diagnose a failed build into
// <manifestDir>/FAIL_<ts>.tgz — the rule logs (logs/), the report of every gate on disk (the
// failed ones named in status.json: a failure often needs the passing gates beside it to be read),
// the ERROR_*.json reports, the manifest and the status of every target — so it can be attached to an issue or sent to a colleague. Every file
// is packed with the values of the pipeline's declared secrets redacted, in all their encodings
// (logs and error reports are redacted when written; this also covers what a rule wrote itself).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileTimestamp } from '../report/error-report.ts';
import { manifestPath } from '../report/manifest.ts';
import { listFilesRecursive, writeFileAtomic } from '../util/fs.ts';
import { redactor } from '../util/redact-secrets.ts';
import { targetStatuses } from './status.ts';
import type { Workspace } from '../workspace/workspace.ts';

interface Io {
  out: (s: string) => void;
}

function filesUnder(root: string, dir: string): string[] {
  try {
    return listFilesRecursive(path.join(root, dir)).map((f) => `${dir}/${f}`);
  } catch {
    return [];
  }
}

export async function runFailpack(ws: Workspace, io: Io): Promise<number> {
  const { root } = ws;
  const files = new Set<string>([...filesUnder(root, 'logs')]);
  for (const f of fs.existsSync(path.join(root, 'reports')) ? fs.readdirSync(path.join(root, 'reports')) : []) {
    if (/^ERROR_.*\.json$/.test(f)) files.add(`reports/${f}`);
  }
  const failedGates: string[] = [];
  for (const t of ws.pipeline.targets.values()) {
    if (!t.report) continue;
    if (ws.trace.records.get(t.name)?.result === 'gate-failed') failedGates.push(t.name);
    if (fs.existsSync(path.join(root, t.report))) files.add(t.report);
  }
  const manifest = manifestPath(ws.pipeline.manifestDir);
  if (fs.existsSync(path.join(root, manifest))) files.add(manifest);
  const ts = fileTimestamp();
  // Stage the files (hard links where possible) with a status snapshot, then pack the stage.
  const stage = path.join(ws.stateDir, 'tmp', `failpack-${ts}`);
  const list = [...files].sort();
  const secretNames = new Set([...ws.pipeline.targets.values()].flatMap((t) => t.secrets));
  const redact = redactor([...secretNames].map((n) => process.env[n]));
  try {
    for (const f of list) {
      fs.mkdirSync(path.dirname(path.join(stage, f)), { recursive: true });
      const bytes = fs.readFileSync(path.join(root, f));
      fs.writeFileSync(path.join(stage, f), bytes.includes(0) ? bytes : redact(bytes.toString('utf8')));
    }
    writeFileAtomic(
      path.join(stage, 'status.json'),
      JSON.stringify({ profile: ws.profile, failed_gates: failedGates, targets: await targetStatuses(ws) }, null, 2) +
        '\n',
    );
    const out = path.posix.join(ws.pipeline.manifestDir, `FAIL_${ts}.tgz`);
    fs.mkdirSync(path.join(root, ws.pipeline.manifestDir), { recursive: true });
    const tar = await import('tar');
    await tar.create({ gzip: true, file: path.join(root, out), cwd: stage, portable: true }, ['status.json', ...list]);
    io.out(
      `failpack: ${out} (${list.length + 1} files${failedGates.length ? `; failed gates: ${failedGates.join(', ')}` : ''})\n`,
    );
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
  return 0;
}
