// Loads rc1.build.ts (compiled through the module compiler's cache, never a TS loader on the
// no-op path), validates the declaration (zod .strict(), only when it changed since the last
// successful validation) and resolves it into a frozen ResolvedPipeline. Every declaration error
// is a UsageError naming the targets and the rc1.build.ts line.
import { beforeMainThreadImport } from '../util/main-thread-import.ts';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PipelineContext, PipelineFn, SlurmExecutor, UserPipeline, UserTarget } from '../api/index.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { sortedCopy } from '../util/canonical-json.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { parseSize } from '../util/size.ts';
import { findCycle } from '../graph/find-cycle.ts';
import { forbiddenOutput, lexicalProblem } from '../graph/workspace-paths.ts';
import type { InputItem, ResolvedOutput, ResolvedPipeline, ResolvedTarget } from '../graph/resolved.ts';
import { isGlob } from '../hash/glob-cache.ts';
import { ENGINE_STATE, isEngineStatePath } from '../state/engine-state.ts';
import { CompileError, type ModuleCompiler } from './compile-module.ts';
import { ENGINE_COMMANDS } from './engine-commands.ts';
import { certainlyValidDeclaration } from './pipeline-fast-check.ts';
import { type LoadedConfig, hasKey } from './load-configs.ts';
import { type Diagnostic, UsageError, didYouMean, siteString } from './usage-error.ts';

export const PIPELINE_FILE = 'rc1.build.ts';

/** What a pipeline gets for what it does not declare (STYLE 11): generic, nothing of any one pipeline. */
export const PIPELINE_DEFAULTS = Object.freeze({
  /** Where the manifest and its sha256 sidecars go. */
  manifestDir: 'reports/build',
  // defaultTargets: the leaves (every target nothing else depends on), computed in loadPipeline.
});

export async function importPipeline(root: string, compiler: ModuleCompiler): Promise<UserPipeline | PipelineFn> {
  if (!fs.existsSync(path.join(root, PIPELINE_FILE))) {
    throw new UsageError({
      headline: `no ${PIPELINE_FILE} in ${root}`,
      hint: `run rc1-build in the directory that holds ${PIPELINE_FILE}`,
    });
  }
  let file: string;
  try {
    file = await compiler.compiled(PIPELINE_FILE);
  } catch (e) {
    if (e instanceof CompileError)
      throw new UsageError({ headline: `${PIPELINE_FILE} does not compile`, context: { error: e.message } });
    throw e;
  }
  let mod: { default?: unknown };
  beforeMainThreadImport(PIPELINE_FILE);
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (e) {
    throw new UsageError({
      headline: `${PIPELINE_FILE} threw while loading: ${(e as Error).message}`,
      location: PIPELINE_FILE,
    });
  }
  if (!mod.default || (typeof mod.default !== 'object' && typeof mod.default !== 'function')) {
    throw new UsageError({
      headline: `${PIPELINE_FILE} must \`export default definePipeline({...})\``,
      location: `${PIPELINE_FILE}:1:1`,
    });
  }
  return mod.default as UserPipeline | PipelineFn;
}

/** Evaluate a function-form pipeline with the profile and the resolved config. */
export function evaluatePipeline(decl: UserPipeline | PipelineFn, profile: string, config: LoadedConfig): UserPipeline {
  if (typeof decl !== 'function') return decl;
  let body: UserPipeline;
  try {
    body = decl({ profile, config: config.values as PipelineContext['config'] });
  } catch (e) {
    throw new UsageError({
      headline: `${PIPELINE_FILE}: the pipeline function threw: ${(e as Error).message}`,
      location: siteString(decl.site, '') ?? PIPELINE_FILE,
    });
  }
  for (const k of ['profiles', 'defaultProfile'] as const) {
    if (body && typeof body === 'object' && k in body) {
      throw new UsageError({
        headline: `${PIPELINE_FILE}: the pipeline function returns ${k}`,
        location: siteString(decl.site, '') ?? PIPELINE_FILE,
        hint: `the profile is chosen before the function runs: declare it as definePipeline(fn, { ${k}: … })`,
      });
    }
  }
  return body;
}

/** zod validation, skipped when this exact declaration was validated before or the quick check (pipeline-fast-check.ts) vouches for it. */
async function validateShape(root: string, stateDir: string, decl: UserPipeline): Promise<void> {
  const stamp = path.join(stateDir, 'compiled', 'pipeline-validated');
  const digest = sha256Hex(JSON.stringify(decl));
  try {
    if (fs.readFileSync(stamp, 'utf8') === digest) return;
  } catch {
    // never validated
  }
  // A declaration the quick check vouches for is one zod accepts; anything else goes to zod, for its messages.
  if (!certainlyValidDeclaration(decl)) {
    const { pipelineSchema, targetSchema, formatZodIssue } = await import('./pipeline-schema.ts');
    const diags: Diagnostic[] = [];
    const top = pipelineSchema.safeParse(decl);
    if (!top.success) {
      for (const i of top.error.issues) {
        const { field, message } = formatZodIssue(i);
        diags.push({
          headline: `definePipeline: ${field}: ${message}`,
          location: siteString(decl.site, root) ?? PIPELINE_FILE,
        });
      }
    }
    (decl.targets ?? []).forEach((t: UserTarget, idx: number) => {
      const r = targetSchema.safeParse(t);
      if (r.success) return;
      for (const i of r.error.issues) {
        const { field, message } = formatZodIssue(i);
        const name = typeof t?.name === 'string' ? t.name : `#${idx}`;
        diags.push({
          headline: `target ${name}: ${field}: ${message}`,
          location: siteString(t?.site, root) ?? PIPELINE_FILE,
        });
      }
    });
    if (diags.length) throw new UsageError(diags);
  }
  writeFileAtomic(stamp, digest);
}

/** A workspace-relative path as targets record it (forward slashes, normalised, no leading ./). */
export function normalizeRel(p: string): string {
  return path.posix.normalize(p.replace(/\\/g, '/')).replace(/^\.\//, '');
}

function insideWorkspace(p: string): boolean {
  return !path.posix.isAbsolute(p) && p !== '..' && !p.startsWith('../');
}

/** A diagnostic about a declared path (workspace-paths.ts says which paths are allowed). */
function pathDiag(headline: string, location: string, hint: string): Diagnostic {
  return { headline, location, hint };
}

export async function loadPipeline(opts: {
  root: string;
  stateDir: string;
  compiler: ModuleCompiler;
  config: LoadedConfig;
  profile: string;
  decl?: UserPipeline;
}): Promise<ResolvedPipeline> {
  const { root } = opts;
  const decl = opts.decl ?? evaluatePipeline(await importPipeline(root, opts.compiler), opts.profile, opts.config);
  await validateShape(root, opts.stateDir, decl);
  const diags: Diagnostic[] = [];
  const where = (t: UserTarget): string => siteString(t.site, root) ?? PIPELINE_FILE;

  const targets = new Map<string, ResolvedTarget>();
  const producers = new Map<string, string>();
  const externalRoots = (decl.externalRoots ?? []).map((r) => path.resolve(root, r));
  const ruleFiles = new Set(decl.targets.map((t) => normalizeRel(t.rule)));
  const OUTSIDE_HINT =
    'paths are workspace-relative (reports/x.json); a directory outside it must be declared in definePipeline({ externalRoots: [...] })';
  const executors = decl.executors ?? {};
  for (const name of Object.keys(executors)) {
    if (!decl.targets.some((t) => t.name === name)) {
      const guess = didYouMean(
        name,
        decl.targets.map((t) => t.name),
      );
      diags.push({
        headline: `definePipeline: executors names unknown target ${name}`,
        location: siteString(decl.site, root) ?? PIPELINE_FILE,
        ...(guess ? { hint: `did you mean ${guess}?` } : {}),
      });
    }
  }
  /** The target's Slurm executor (the pipeline's executors map first, then its own), or null when it runs locally. */
  const slurmOf = (t: UserTarget): SlurmExecutor | null => {
    const e = Object.hasOwn(executors, t.name) ? executors[t.name] : t.executor;
    return e === 'slurm' ? { kind: 'slurm' } : e && e !== 'local' ? e : null;
  };
  for (const t of decl.targets) {
    if (slurmOf(t)?.staging === 'remote-cache' && !decl.remoteCache)
      diags.push({
        headline: `target ${t.name}: executor.staging 'remote-cache' moves its inputs and outputs through the pipeline's remote cache, and definePipeline declares no remoteCache`,
        location: where(t),
        hint: "declare definePipeline({ remoteCache: { url: … } }) (README: Sharing a cache and running on a cluster), or use staging 'shared-fs'",
      });
    if (targets.has(t.name)) {
      diags.push({
        headline: `two targets are named ${t.name}`,
        location: where(t),
        context: { first: siteString(targets.get(t.name)!.site, root) ?? '?' },
      });
      continue;
    }
    const declared: [string | undefined, string][] = Array.isArray(t.outputs)
      ? t.outputs.map((o) => [undefined, o])
      : Object.entries(t.outputs);
    const outputs: ResolvedOutput[] = declared.map(([name, o]) => ({
      path: normalizeRel(o).replace(/\/$/, ''),
      dir: o.endsWith('/'),
      ...(name ? { name } : {}),
    }));
    for (const o of outputs) {
      if (!insideWorkspace(o.path)) {
        diags.push(
          pathDiag(
            `target ${t.name}: output ${o.path} is outside the workspace`,
            where(t),
            'outputs are workspace-relative paths such as reports/x.json (a symlink inside the workspace may lead into a declared externalRoots directory)',
          ),
        );
        continue;
      }
      const forbidden = forbiddenOutput(o.path, ruleFiles);
      if (forbidden) {
        diags.push(
          pathDiag(
            `target ${t.name}: output ${o.path} ${forbidden}`,
            where(t),
            'write outputs under data/, reports/, models/ or another folder of your own',
          ),
        );
        continue;
      }
      const other = producers.get(o.path);
      if (other) {
        diags.push({
          headline: `targets ${other} and ${t.name} both write ${o.path}`,
          location: where(t),
          context: { [other]: siteString(decl.targets.find((x) => x.name === other)?.site, root) ?? '?' },
          hint: 'each output has exactly one producing target',
        });
      } else producers.set(o.path, t.name);
    }
    for (const st of t.state ?? []) {
      const p = normalizeRel(typeof st === 'string' ? st : st.path);
      if (!p.startsWith('.rc1/') || isEngineStatePath(p)) {
        diags.push({
          headline: `target ${t.name}: state ${p} is not a rule's own path under .rc1/`,
          location: where(t),
          context: {
            'engine-owned': Object.keys(ENGINE_STATE)
              .map((n) => `.rc1/${n}`)
              .join(', '),
          },
          hint: "declare the rule's own folder or file, e.g. '.rc1/scorecache.sqlite'; .rc1/state/<target>/ needs no declaring",
        });
      }
    }
    // A gate's report: one of its outputs, by name or by path.
    const report = t.report ? (outputs.find((o) => o.name === t.report)?.path ?? normalizeRel(t.report)) : undefined;
    if (report && !outputs.some((o) => o.path === report)) {
      diags.push({ headline: `gate ${t.name}: report ${report} is not one of its outputs`, location: where(t) });
    }
    const metrics = (t.metrics ?? []).map(normalizeRel);
    for (const m of metrics) {
      if (!outputs.some((o) => o.path === m && !o.dir))
        diags.push({
          headline: `target ${t.name}: metrics ${m} is not one of its file outputs`,
          location: where(t),
          hint: 'metrics name output files (JSON or JSON Lines) of the same target',
        });
    }
    for (const key of t.params ?? []) {
      if (!hasKey(opts.config.values, key)) {
        const top = key.split('.')[0]!;
        const guess = didYouMean(top, Object.keys(opts.config.values));
        diags.push({
          headline: `target ${t.name}: unknown config key ${key}`,
          location: where(t),
          context: { configs: opts.config.files.join(', ') || '(none found)' },
          hint:
            guess && guess !== top
              ? `did you mean ${guess}?`
              : `add ${key} to configs/default.yaml or remove it from params`,
        });
      }
    }
    targets.set(t.name, {
      name: t.name,
      rule: normalizeRel(t.rule),
      gate: t.gate === true,
      ...(report ? { report } : {}),
      inputs: [],
      outputs,
      params: [...new Set(t.params ?? [])].sort(),
      ...(t.params === undefined ? { paramsFromRule: true } : {}),
      args: sortedCopy(t.args ?? {}),
      env: [...new Set(t.env ?? [])].sort(),
      secrets: [...new Set(t.secrets ?? [])].sort(),
      deps: [],
      ...(t.description ? { description: t.description } : {}),
      ...(metrics.length ? { metrics } : {}),
      ...(t.requires?.length || slurmOf(t)
        ? {
            requires: [
              ...(t.requires ?? []),
              ...(slurmOf(t)
                ? [
                    {
                      executable: 'sbatch',
                      why: `target ${t.name} runs as a Slurm batch job (executor: slurm); sbatch, squeue and scancel come with slurm-client`,
                    },
                  ]
                : []),
            ],
          }
        : {}),
      ...(slurmOf(t) ? { executor: { ...slurmOf(t)!, staging: slurmOf(t)!.staging ?? 'shared-fs' } } : {}),
      ...(t.state?.length
        ? {
            state: t.state.map((x) =>
              typeof x === 'string'
                ? { path: normalizeRel(x).replace(/\/$/, ''), cache: false }
                : { path: normalizeRel(x.path).replace(/\/$/, ''), cache: x.cache === true },
            ),
          }
        : {}),
    });
    // The call site stays lazy: formatting 1 000 stack traces would dominate a no-op.
    Object.defineProperty(targets.get(t.name)!, 'site', { enumerable: false, get: () => t.site });
  }
  // Nested outputs (a file inside another target's directory output) would make ownership ambiguous.
  const dirOutputs = [...producers].filter(([p, owner]) => targets.get(owner)!.outputs.find((o) => o.path === p)?.dir);
  if (dirOutputs.length) {
    for (const [q, other] of producers) {
      for (const [p, owner] of dirOutputs) {
        if (p !== q && q.startsWith(p + '/')) {
          diags.push({
            headline: `output ${q} of ${other} lies inside directory output ${p} of ${owner}`,
            location: where(decl.targets.find((x) => x.name === other)!),
          });
        }
      }
    }
  }
  for (const t of decl.targets) {
    const rt = targets.get(t.name);
    if (!rt || rt.inputs.length) continue;
    const deps = new Set<string>();
    for (const [group, raw] of Object.entries(t.inputs ?? {})) {
      const items: InputItem[] = [];
      for (const it of Array.isArray(raw) ? raw : [raw]) {
        if (typeof it === 'object') {
          if (!targets.has(it.name)) {
            const guess = didYouMean(it.name, targets.keys());
            diags.push({
              headline: `target ${t.name}: input ${group} names unknown target ${it.name}`,
              location: where(t),
              ...(guess ? { hint: `did you mean ${guess}?` } : {}),
            });
            continue;
          }
          if (it.output !== undefined) {
            const names = targets.get(it.name)!.outputs.flatMap((o) => (o.name ? [o.name] : []));
            if (!names.includes(it.output)) {
              const guess = didYouMean(it.output, names);
              diags.push({
                headline: `target ${t.name}: input ${group} names output ${it.output} of ${it.name}, which has ${names.length ? `the outputs ${names.join(', ')}` : 'no named outputs'}`,
                location: where(t),
                hint: guess
                  ? `did you mean target('${it.name}', '${guess}')?`
                  : names.length
                    ? `one of: ${names.map((n) => `target('${it.name}', '${n}')`).join(', ')}`
                    : `name its outputs (outputs: { name: 'path' }) or take them all: target('${it.name}')`,
              });
              continue;
            }
          }
          deps.add(it.name);
          items.push({ kind: 'target', name: it.name, ...(it.output !== undefined ? { output: it.output } : {}) });
        } else {
          const p = normalizeRel(it);
          const outside = lexicalProblem(root, p, externalRoots);
          if (outside) {
            diags.push(pathDiag(`target ${t.name}: input ${group}: ${p} ${outside}`, where(t), OUTSIDE_HINT));
            continue;
          }
          if (isGlob(p)) items.push({ kind: 'glob', pattern: p });
          else {
            const producer = producers.get(p);
            if (producer) deps.add(producer);
            items.push({ kind: 'file', path: p, ...(producer ? { producer } : {}) });
          }
        }
      }
      rt.inputs.push({ group, items });
    }
    deps.delete(t.name);
    rt.deps = [...deps].sort();
  }
  const order = decl.targets.map((t) => t.name).filter((n, i, a) => a.indexOf(n) === i);
  if (!diags.length) {
    const cycle = findCycle(order, (n) => targets.get(n)!.deps);
    if (cycle) {
      const t = decl.targets.find((x) => x.name === cycle[0])!;
      diags.push({
        headline: `dependency cycle: ${cycle.join(' -> ')}`,
        location: where(t),
        hint: 'a target cannot depend on its own outputs',
      });
    }
  }
  // Undeclared, the default targets are the leaves: every target nothing else depends on.
  const defaults = decl.defaultTargets ?? order.filter((n) => ![...targets.values()].some((x) => x.deps.includes(n)));
  for (const d of decl.defaultTargets ?? []) {
    if (!targets.has(d))
      diags.push({
        headline: `defaultTargets names unknown target ${d}`,
        location: siteString(decl.site, root) ?? PIPELINE_FILE,
      });
  }
  const manifestDir = normalizeRel(decl.manifestDir ?? PIPELINE_DEFAULTS.manifestDir);
  const badManifest = !insideWorkspace(manifestDir)
    ? 'is outside the workspace'
    : forbiddenOutput(manifestDir, ruleFiles);
  if (badManifest)
    diags.push(
      pathDiag(
        `definePipeline: manifestDir ${manifestDir} ${badManifest}`,
        siteString(decl.site, root) ?? PIPELINE_FILE,
        `the manifest is written inside the workspace, e.g. ${PIPELINE_DEFAULTS.manifestDir}`,
      ),
    );
  const cacheMaxBytes = decl.cacheMaxSize === undefined ? undefined : parseSize(decl.cacheMaxSize);
  if (cacheMaxBytes === null) {
    diags.push({
      headline: `cacheMaxSize: expected a size such as '20G', '500M' or a number of bytes, got ${JSON.stringify(decl.cacheMaxSize)}`,
      location: siteString(decl.site, root) ?? PIPELINE_FILE,
    });
  }
  const commands = decl.commands ?? {};
  for (const [name, c] of Object.entries(commands)) {
    const at = siteString(decl.site, root) ?? PIPELINE_FILE;
    if (ENGINE_COMMANDS.includes(name))
      diags.push({
        headline: `definePipeline: command ${name} shadows the engine's own command`,
        location: at,
        hint: `rename it; the engine's commands are ${ENGINE_COMMANDS.join(', ')}`,
      });
    else if (targets.has(name))
      diags.push({
        headline: `definePipeline: command ${name} has the name of a target`,
        location: at,
        hint: 'a name on the command line must mean one thing: rename the command',
      });
    if (!fs.existsSync(path.join(root, c.module)))
      diags.push({
        headline: `definePipeline: command ${name}: module ${c.module} does not exist`,
        location: at,
        hint: 'a workspace-relative path of a .ts file whose default export is defineCommand(…)',
      });
  }
  if (diags.length) throw new UsageError(diags);
  for (const t of targets.values()) Object.freeze(t);
  return Object.freeze({
    root,
    targets,
    order,
    producers,
    defaultTargets: defaults,
    externalRoots: decl.externalRoots ?? [],
    manifestDir,
    ...(decl.name ? { name: decl.name } : {}),
    ...(decl.historyKeep ? { historyKeep: decl.historyKeep } : {}),
    ...(decl.sync
      ? {
          sync: {
            from: decl.sync.from,
            dir: normalizeRel(decl.sync.dir ?? 'reports/sync'),
            peers: decl.sync.peers.map((p) => ({
              name: p.name,
              provides: p.provides.map((x) => ({ ...x, path: normalizeRel(x.path) })),
            })),
          },
        }
      : {}),
    configFiles: opts.config.files,
    profile: opts.profile,
    commands,
    ...(typeof cacheMaxBytes === 'number' ? { cacheMaxBytes } : {}),
    ...(decl.remoteCache ? { remoteCache: decl.remoteCache } : {}),
    ...(decl.report ? { reportSections: normalizeRel(decl.report.sections) } : {}),
  });
}

/**
 * The config files: every configs/*.yaml (default.yaml first, then by name) and the profile's
 * overlay configs/profiles/<profile>.yaml. A key set by two of the base files is an error; the
 * overlay may override anything.
 */
export function configFiles(root: string, profile: string): { base: string[]; overlay: string } {
  let names: string[] = [];
  try {
    names = fs
      .readdirSync(path.join(root, 'configs'))
      .filter((n) => /\.ya?ml$/.test(n))
      .sort();
  } catch {
    names = [];
  }
  names.sort((a, b) => (a === 'default.yaml' ? -1 : b === 'default.yaml' ? 1 : a < b ? -1 : 1));
  return { base: names.map((n) => `configs/${n}`), overlay: `configs/profiles/${profile}.yaml` };
}
