// The rule worker (a worker_thread): imports a compiled rule module, validates its params with
// the rule's zod schema, runs it against a RuleContext, writes a gate's report, checks that the
// rule wrote exactly its declared outputs, and hashes them. Runs off the main thread so -j gives
// real CPU parallelism and an interrupted build can terminate rules.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { type Check, type Rule, type RuleContext, createRng, gatePasses } from '../api/index.ts';
import { prettyJson } from '../util/canonical-json.ts';
import { isExpectedError } from '../util/expected-error.ts';
import { DURABLE_AFTER_MS, hashOutput } from './hash-output.ts';
import { outputRecords } from '../state/commit-outputs.ts';
import { OutputCache } from '../cache/output-cache.ts';
import type { FromWorker, Job, JobFailure, ToWorker } from './protocol.ts';

process.setSourceMapsEnabled(true);
const port = parentPort!;
const aborts = new Map<number, AbortController>();

class ContractError extends Error {}

function post(m: FromWorker): void {
  port.postMessage(m);
}

/** Files the rule left in its temp root that are not declared outputs. */
function undeclared(job: Job): string[] {
  const declared = new Set(job.outputs.map((o) => path.basename(o.tmp)));
  return fs.readdirSync(job.tmpDir).filter((f) => f.startsWith(job.tmpPrefix) && !declared.has(f)).map((f) => {
    const beside = job.outputs.find((o) => f.startsWith(path.basename(o.tmp)));
    return beside ? `${beside.path}${f.slice(path.basename(beside.tmp).length)}` : f.slice(job.tmpPrefix.length);
  });
}

async function run(job: Job): Promise<void> {
  const ac = new AbortController();
  aborts.set(job.id, ac);
  try {
    const mod = (await import(pathToFileURL(job.module).href)) as { default?: Rule };
    const rule = mod.default;
    if (!rule || typeof rule.run !== 'function') {
      throw new ContractError(`${job.ruleFile} must \`export default defineRule({ name, version, run })\``);
    }
    let params: unknown = job.params;
    if (rule.params) {
      const r = rule.params.safeParse(job.params);
      if (!r.success) {
        const paramIssues = r.error.issues.map((i) => ({ key: i.path.map(String).join('.'), message: i.message }));
        const err: JobFailure = { kind: 'param-error', message: `invalid params for ${job.target}`, paramIssues };
        post({ type: 'error', id: job.id, error: err });
        return;
      }
      params = r.data;
    }
    const outputs = new Map(job.outputs.map((o) => [o.path, o]));
    const named = new Map(job.outputs.flatMap((o) => (o.name ? [[o.name, o] as const] : [])));
    const declaredOutput = (fn: string, p: string): Job['outputs'][number] => {
      const o = named.get(p) ?? outputs.get(p.replace(/^\.\//, '').replace(/\/$/, ''));
      if (o) return o;
      const declared = job.outputs.map((x) => (x.name ? `${x.name} (${x.path})` : x.path)).join(', ');
      throw new ContractError(`${job.ruleFile}: ctx.${fn}('${p}'): not a declared output of ${job.target} (declared: ${declared})`);
    };
    const ctx: RuleContext<unknown> = {
      target: job.target,
      root: job.root,
      get stateDir(): string { fs.mkdirSync(job.stateDir, { recursive: true }); return job.stateDir; },
      profile: job.profile,
      params,
      env: Object.freeze({ ...job.env }),
      args: Object.freeze({ ...job.args }) as RuleContext<unknown>['args'],
      outputs: Object.freeze(job.outputs.map((o) => o.path)),
      forced: job.forced,
      codeHash: job.codeHash,
      inputs(name: string): string[] {
        const v = job.inputs[name];
        if (!v) throw new ContractError(`${job.ruleFile}: ctx.inputs('${name}'): target ${job.target} declares no input group '${name}' (it has: ${Object.keys(job.inputs).join(', ') || 'none'})`);
        return v;
      },
      input(name: string): string {
        const v = ctx.inputs(name);
        if (v.length !== 1) throw new ContractError(`${job.ruleFile}: ctx.input('${name}'): input group ${name} of ${job.target} holds ${v.length} paths, expected exactly one (${v.slice(0, 4).map((p) => path.relative(job.root, p)).join(', ') || 'none'}); declare one file or one output of a target, target(name, 'output')`);
        return v[0]!;
      },
      outputPath(p: string): string {
        return declaredOutput('outputPath', p).path;
      },
      output(p: string): string {
        const o = declaredOutput('output', p);
        if (o.dir) fs.mkdirSync(o.tmp, { recursive: true });
        return o.tmp;
      },
      state(p: string): string {
        const rel = p.replace(/^\.\//, '').replace(/\/$/, '');
        if (!(job.state ?? []).includes(rel)) {
          throw new ContractError(`${job.ruleFile}: ctx.state('${p}'): not a declared state path of ${job.target} (declared: ${(job.state ?? []).join(', ') || 'none'}); declare it in the target's \`state\`, or keep the target's own state in ctx.stateDir`);
        }
        const abs = path.join(job.root, rel);
        fs.mkdirSync(path.dirname(abs), { recursive: true });
        return abs;
      },
      rng: createRng,
      log: (line: string) => post({ type: 'log', id: job.id, line: String(line) }),
      progress: (done: number, total: number, unit?: string) => post({ type: 'progress', id: job.id, done, total, ...(unit ? { unit } : {}) }),
      signal: ac.signal,
    };
    const started = performance.now();
    const res = (await rule.run(ctx)) ?? {};
    const durable = performance.now() - started >= DURABLE_AFTER_MS;
    if (ac.signal.aborted) throw new Error('interrupted');
    let checks: Check[] | undefined;
    if (job.gate) {
      if (!Array.isArray(res.checks) || res.checks.length === 0) throw new ContractError(`gate ${job.target}: its rule returned no checks`);
      checks = res.checks;
      const reportOut = job.outputs.find((o) => o.path === job.report)!;
      const pass = gatePasses(checks);
      fs.writeFileSync(reportOut.tmp, prettyJson({ ...(res.report ?? {}), target: job.target, profile: job.profile, pass, checks }));
    }
    for (const o of job.outputs) {
      const st = fs.statSync(o.tmp, { throwIfNoEntry: false });
      if (!st) throw new ContractError(`${job.target}: the rule did not write its declared output ${o.path}`);
      if (o.dir !== st.isDirectory()) throw new ContractError(`${job.target}: output ${o.path} was declared as a ${o.dir ? 'directory' : 'file'} but the rule wrote a ${st.isDirectory() ? 'directory' : 'file'}`);
    }
    const extra = undeclared(job);
    if (extra.length) throw new ContractError(`${job.target}: the rule wrote undeclared files: ${extra.slice(0, 5).join(', ')}`);
    // Private copies of the outputs into the cache, here in parallel rather than on the main
    // thread: a small file's object from the bytes just hashed (at once: they live in the hash's
    // buffer), larger ones by copy; then the entry, when the engine lets the worker write it (else
    // it is written after the commit). A failure is left to the commit's put(), which retries and
    // reports a write error.
    const cache = job.cacheDir ? new OutputCache(job.cacheDir) : null;
    let cacheFailed = false;
    const stored = new Set<string>();
    const onSmall = (file: string, sha: string, bytes: Buffer): void => {
      if (cacheFailed) return;
      try { cache!.storeObject(file, sha, bytes); stored.add(file); } catch { cacheFailed = true; }
    };
    const hashed = job.outputs.map((o) => hashOutput(o, { fsync: durable, ...(cache ? { onSmall } : {}) }));
    const ruleId = { name: rule.name, version: rule.version };
    let cached = false;
    if (cache && !cacheFailed) {
      try {
        for (const h of hashed) {
          for (const [rel, [sha]] of Object.entries(h.files)) {
            const file = rel === '' ? h.tmp : path.join(h.tmp, rel);
            if (!stored.has(file)) cache.storeObject(file, sha);
          }
        }
        if (job.cacheKey) {
          const gateFailed = job.gate && !gatePasses(checks ?? []);
          cache.putEntry({
            target: job.target, key: job.cacheKey, outputs: outputRecords(hashed), result: gateFailed ? 'gate-failed' : 'ok',
            ...(checks ? { checks } : {}), ...(res.summary ? { summary: res.summary } : {}), rule: ruleId,
          });
          cached = true;
        }
      } catch { /* put() retries and reports a write error */ }
    }
    post({ type: 'done', id: job.id, result: { ...(checks ? { checks } : {}), ...(res.summary ? { summary: res.summary } : {}), rule: ruleId, outputs: hashed, ...(cached ? { cached } : {}) } });
  } catch (e) {
    const err = e as Error;
    // Expected failures (a broken contract, an error carrying the expected-error marker: RuleError,
    // a pipeline library's bad-data errors) print their message alone.
    const expected = e instanceof ContractError || isExpectedError(e);
    const kind = ac.signal.aborted ? 'aborted' : expected ? 'contract-error' : 'rule-error';
    post({ type: 'error', id: job.id, error: { kind, message: err?.message ?? String(e), ...(err?.stack && kind === 'rule-error' ? { stack: err.stack } : {}) } });
  } finally {
    aborts.delete(job.id);
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'run') void run(m.job);
  else aborts.get(m.id)?.abort();
});
