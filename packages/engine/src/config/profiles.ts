// Profiles: named variants of one pipeline (say a cheap one for development and the real one),
// chosen by the RUN_MODE environment variable — the engine's setting, the same for every
// pipeline. The names are the pipeline's: definePipeline declares `profiles` and `defaultProfile`
// (for a pipeline function, as definePipeline's second argument, because the profile picks the
// config overlay configs/profiles/<profile>.yaml and is an argument of the function, so it must be
// known before the function runs). A pipeline that declares none gets the generic defaults: the
// profile `default` when RUN_MODE is unset, and any profile that has an overlay file.
//
// The declaration is read without importing rc1.build.ts on the no-op path: it is cached in
// .rc1/compiled/profiles.json, keyed by the code closure of rc1.build.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PipelineProfiles, UserPipeline, PipelineFn } from '../api/index.ts';
import { sha256Hex } from '../hash/hash-file.ts';
import { writeFileAtomic } from '../util/fs.ts';
import { UsageError } from './usage-error.ts';

/** The environment variable that names the profile (an engine setting). */
export const PROFILE_ENV = 'RUN_MODE';
/** The profile of a pipeline that declares no defaultProfile, when RUN_MODE is unset. */
export const DEFAULT_PROFILE = 'default';
const NAME = /^[A-Za-z0-9][\w-]*$/;

/** The profile settings a declaration carries (object form: its fields; function form: definePipeline's second argument). */
export function declaredProfiles(decl: UserPipeline | PipelineFn): PipelineProfiles {
  const src = decl as PipelineProfiles;
  return {
    ...(src.profiles !== undefined ? { profiles: src.profiles } : {}),
    ...(src.defaultProfile !== undefined ? { defaultProfile: src.defaultProfile } : {}),
  };
}

/** Problems of a profile declaration (empty when fine). */
export function profileProblems(p: PipelineProfiles): string[] {
  const out: string[] = [];
  if (p.profiles !== undefined) {
    if (!Array.isArray(p.profiles) || p.profiles.length === 0) out.push('profiles: expected a non-empty list of names');
    else
      for (const n of p.profiles)
        if (typeof n !== 'string' || !NAME.test(n))
          out.push(`profiles: ${JSON.stringify(n)} is not a profile name (letters, digits, _ and -)`);
  }
  if (p.defaultProfile !== undefined) {
    if (typeof p.defaultProfile !== 'string' || !NAME.test(p.defaultProfile))
      out.push(`defaultProfile: ${JSON.stringify(p.defaultProfile)} is not a profile name`);
    else if (Array.isArray(p.profiles) && !p.profiles.includes(p.defaultProfile))
      out.push(`defaultProfile: ${p.defaultProfile} is not one of profiles (${p.profiles.join(', ')})`);
  }
  return out;
}

/**
 * The profile settings of rc1.build.ts: from the cache when its code closure is unchanged, else by
 * importing it (`load`, which the pipeline's own loading then reuses from the module cache).
 */
export async function cachedProfiles(
  stateDir: string,
  closure: Record<string, string>,
  load: () => Promise<UserPipeline | PipelineFn>,
): Promise<PipelineProfiles> {
  const file = path.join(stateDir, 'compiled', 'profiles.json');
  const key = sha256Hex(JSON.stringify(closure));
  try {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8')) as { key: string; profiles: PipelineProfiles };
    if (doc.key === key) return doc.profiles;
  } catch {
    // not cached yet
  }
  const profiles = declaredProfiles(await load());
  const problems = profileProblems(profiles);
  if (problems.length)
    throw new UsageError(problems.map((p) => ({ headline: `definePipeline: ${p}`, location: 'rc1.build.ts' })));
  writeFileAtomic(file, JSON.stringify({ key, profiles }));
  return profiles;
}

/** Profiles that have an overlay file, configs/profiles/<name>.yaml. */
export function overlayProfiles(root: string): string[] {
  try {
    return fs
      .readdirSync(path.join(root, 'configs', 'profiles'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.slice(0, -5))
      .sort();
  } catch {
    return [];
  }
}

/** The profile in force: RUN_MODE, else the default; one the pipeline knows, or a usage error. */
export function chooseProfile(env: NodeJS.ProcessEnv, declared: PipelineProfiles, root: string): string {
  const fallback = declared.defaultProfile ?? declared.profiles?.[0] ?? DEFAULT_PROFILE;
  const known = declared.profiles ?? [...new Set([fallback, ...overlayProfiles(root)])].sort();
  const p = env[PROFILE_ENV] || fallback;
  if (!known.includes(p)) {
    const from = declared.profiles
      ? 'the profiles rc1.build.ts declares'
      : `the default and those with a configs/profiles/<name>.yaml`;
    throw new UsageError({
      headline: `${PROFILE_ENV} must be one of ${known.join(', ')} (${from}), got ${JSON.stringify(p)}`,
      hint: `unset ${PROFILE_ENV} for the ${fallback} profile`,
    });
  }
  return p;
}
