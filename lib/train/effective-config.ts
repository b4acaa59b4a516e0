// reports/config_effective.yaml: the effective train config as a run used it — profile, engine,
// the validated `train:` section, the config, code and run hashes (and every resume across a code
// change, under WARNING_resumed_across_code_change), the inputs with their sha256 —
// with secrets redacted. Redaction: the value of any key whose name contains key, token, secret,
// password or credential becomes "***", and any occurrence of a secret env var's value in any
// string, in any of its encodings (raw, JSON-escaped, URL-encoded, base64: util/redact-secrets.ts),
// becomes "***". Secret env values are those of the target's env vars whose names look secret
// (the same pattern), plus every other env value of 8 characters or more except the profile
// switches RUN_MODE and REWARD_LIVE_MODE.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, relative } from 'node:path';
import { canonicalJson } from 'rc1-build';
import { REDACTED, redactor } from 'rc1-build';
import type { TrainConfig } from './config.ts';

export { REDACTED };
const SECRET_NAME = /key|token|secret|passw(or)?d|credential/i;
const NOT_SECRET_ENV = new Set(['RUN_MODE', 'REWARD_LIVE_MODE']);

export function secretValues(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .flatMap(([name, v]) => {
      if (!v) return [];
      if (SECRET_NAME.test(name) && v.length >= 4) return [v];
      return !NOT_SECRET_ENV.has(name) && v.length >= 8 ? [v] : [];
    })
    .sort((a, b) => b.length - a.length);
}

export function redact(value: unknown, secrets: readonly string[]): unknown {
  const strip = redactor(secrets);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return strip(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          SECRET_NAME.test(k) && (x === null || typeof x !== 'object' || Array.isArray(x)) ? REDACTED : walk(x),
        ]),
      );
    }
    return v;
  };
  return walk(value);
}

export interface InputDigest {
  path: string;
  sha256: string;
}

/** sha256 of each input file, workspace-relative, per group (for the run hash and the effective config). */
export async function digestInputs(
  inputs: Readonly<Record<string, readonly string[]>>,
  root: string,
): Promise<Record<string, InputDigest[]>> {
  const out: Record<string, InputDigest[]> = {};
  for (const group of Object.keys(inputs).sort()) {
    out[group] = [];
    for (const f of inputs[group]!)
      out[group].push({
        path: relative(root, f),
        sha256: createHash('sha256')
          .update(await readFile(f))
          .digest('hex'),
      });
  }
  return out;
}

/**
 * The input groups a run reads: the built-in engine's scenarios, weights and SFT policy (its
 * starting point and KL reference; and rollouts and scores for dpo); every group but the round-2
 * ticket (a precondition, not data) for the command engine, whose trainer may read any of them.
 */
export function dataGroups(config: Pick<TrainConfig, 'engine' | 'strategy'>, groups: readonly string[]): string[] {
  if (config.engine === 'command') return groups.filter((g) => g !== 'round2');
  return groups.filter(
    (g) =>
      g === 'scenarios' ||
      g === 'weights' ||
      g === 'sft' ||
      (config.strategy === 'dpo' && (g === 'rollouts' || g === 'scores')),
  );
}

/** Of the `sft` group, the policy's files (model.json, model.bin): its checkpoint.json holds the seal time, which is no data. */
const SFT_MODEL_FILES = new Set(['model.json', 'model.bin']);
const dataFiles = (group: string, files: InputDigest[]): InputDigest[] =>
  group === 'sft' ? files.filter((f) => SFT_MODEL_FILES.has(basename(f.path))) : files;

/** The run hash: config hash + the digests of the data inputs the run reads (dataGroups; of the SFT policy, its model files). */
export function runHash(configHash: string, digests: Record<string, InputDigest[]>, groups: readonly string[]): string {
  const data = Object.fromEntries(
    Object.entries(digests)
      .filter(([g]) => groups.includes(g))
      .map(([g, files]) => [g, dataFiles(g, files)]),
  );
  return createHash('sha256')
    .update(canonicalJson({ format: 'rc1-train-run-v1', config: configHash, inputs: data }))
    .digest('hex');
}

/**
 * The effective config file's text. Async: the yaml package is imported here, where it is used, so
 * importing a rule that reaches this module (to read its params schema) does not load it.
 */
export async function effectiveConfigYaml(o: {
  profile: string;
  config: Readonly<TrainConfig>;
  id: { runHash: string; configHash: string; codeHash: string };
  /** Resumes across a code change (run-identity.ts): listed, so the manifest's hash of this file covers them. */
  codeChanges?: readonly { at_step: number; from_code_hash: string; to_code_hash: string }[];
  /** For the command engine: the configured sections its trainer is handed (part of the run's identity). */
  settings?: Readonly<Record<string, unknown>>;
  inputs: Record<string, InputDigest[]>;
  secrets: readonly string[];
}): Promise<string> {
  const { stringify } = await import('yaml');
  const changes = (o.codeChanges ?? []).map((c) => ({
    at_step: c.at_step,
    from_code_hash: c.from_code_hash,
    to_code_hash: c.to_code_hash,
  }));
  const doc = redact(
    {
      profile: o.profile,
      config_hash: o.id.configHash,
      code_hash: o.id.codeHash,
      run_hash: o.id.runHash,
      ...(changes.length ? { WARNING_resumed_across_code_change: changes } : {}),
      train: o.config,
      ...(o.settings ? { trainer_settings: o.settings } : {}),
      inputs: o.inputs,
    },
    o.secrets,
  );
  return `# The effective train config of this run (rc1-build train). Secrets redacted as ${REDACTED}.\n${stringify(doc, { lineWidth: 0 })}`;
}
