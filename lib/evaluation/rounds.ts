// The two preflight rounds (docs/rc1.md, target round1, round2_pass). Both read
// gate reports (the JSON the engine writes for a gate: target, profile, pass, checks) and the
// artifacts they vouch for, and re-state every gate check under `<gate>.<check>`: its pass is
// recomputed from the recorded value, op and threshold (a report that disagrees with its own
// numbers is listed under reports.inconsistent), a waived check stays waived and an n/a check
// n/a, each with its reason (n/a checks are listed apart, under not_applicable; they are not
// waivers, so prod accepts them, but they never count as passes), and every gate of the round must
// have passed (reports.not_passed).
// Round 1 adds: every gate of preflight.rounds.round1 present, every report from this profile,
// and the sha256 of every artifact and report (`vouched`).
// Round 2 re-checks at round-2 settings: the reports of preflight.rounds.round2 (the round-1
// gates re-read, with not_simulated_round2 and the pre_run_check shadow run), round 1's own
// report (summarised, not re-listed: no check failed in it, same profile), every file round 1 vouched for still has the sha256 it had then, and no
// waived check in either round — in prod a waiver fails round 2; in other profiles the list is
// shown as a waived check (dev may pass with waivers, visibly, never silently).
// Pass is computed by the engine from these checks: round2_pass says pass: true only when every
// check of both rounds passed (or, outside prod, was waived).
import { check, notApplicable, waive, type Check, type CheckOp } from 'rc1-build';

export interface GateReport {
  path: string;
  sha256: string;
  target: string;
  profile: string;
  pass: boolean;
  checks: Check[];
}
export interface Artifact {
  path: string;
  sha256: string;
  bytes: number;
}

/** A gate report parsed from JSON text; null when the text is not one (another kind of artifact). */
export function parseGateReport(path: string, sha256: string, text: string): GateReport | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const o = v as Record<string, unknown> | null;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.target !== 'string' ||
    !Array.isArray(o.checks) ||
    typeof o.pass !== 'boolean'
  )
    return null;
  return { path, sha256, target: o.target, profile: String(o.profile), pass: o.pass, checks: o.checks as Check[] };
}

/** A recorded check re-stated under a prefix; `consistent` is false when its recorded pass disagrees with its numbers. */
export function restate(prefix: string, c: Check): { check: Check; consistent: boolean } {
  const fresh = check(`${prefix}.${c.name}`, c.value, c.op as CheckOp, c.threshold, c.hint);
  const again = c.basis ? { ...fresh, basis: c.basis } : fresh;
  if (c.status === 'waived') return { check: waive(again, c.waived ?? 'waived upstream'), consistent: true };
  if (c.status === 'n/a')
    return { check: notApplicable(again, c.not_applicable ?? 'not applicable upstream'), consistent: true };
  return { check: again, consistent: again.pass === c.pass && (c.status === 'pass') === c.pass };
}

export interface RoundInput {
  profile: string;
  reports: GateReport[];
  artifacts: Artifact[];
  /** Gate names that must have a report among the inputs. */
  required: readonly string[];
}

interface Restated {
  checks: Check[];
  waived: string[];
  report: Record<string, unknown>;
}

function restateAll(r: RoundInput): Restated {
  const byTarget = new Map(r.reports.map((g) => [g.target, g]));
  const missing = r.required.filter((t) => !byTarget.has(t));
  const mismatch = r.reports.filter((g) => g.profile !== r.profile).map((g) => `${g.target} (${g.profile})`);
  const inconsistent: string[] = [];
  const notPassed = r.reports.filter((g) => !g.pass).map((g) => g.target);
  const restated: Check[] = [];
  for (const g of [...r.reports].sort((a, b) => r.required.indexOf(a.target) - r.required.indexOf(b.target))) {
    for (const c of g.checks) {
      const s = restate(g.target, c);
      if (!s.consistent) inconsistent.push(s.check.name);
      restated.push(s.check);
    }
  }
  const checks = [
    check(
      'reports.missing',
      missing,
      '==',
      [],
      'declare every gate of the round as an input of this target (preflight.rounds lists them)',
    ),
    check(
      'reports.profile_mismatch',
      mismatch,
      '==',
      [],
      `every report must come from profile ${r.profile}: rebuild them in this profile`,
    ),
    check(
      'reports.inconsistent',
      inconsistent,
      '==',
      [],
      "a report's recorded result disagrees with its own value and threshold: rebuild that gate",
    ),
    check(
      'reports.not_passed',
      notPassed,
      '==',
      [],
      'every gate of the round must have passed (a gate whose checks are all n/a did not): rebuild and fix it',
    ),
    ...restated,
  ];
  const vouched = Object.fromEntries(
    [...r.artifacts, ...r.reports].map((f) => [f.path, f.sha256]).sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
  return {
    checks,
    waived: restated.filter((c) => c.status === 'waived').map((c) => c.name),
    report: {
      not_applicable: restated
        .filter((c) => c.status === 'n/a')
        .map((c) => ({ check: c.name, reason: c.not_applicable ?? '' })),
      reports: r.reports.map((g) => ({
        target: g.target,
        path: g.path,
        sha256: g.sha256,
        pass: g.pass,
        checks: g.checks.length,
      })),
      artifacts: r.artifacts,
      vouched,
    },
  };
}

export function round1(r: RoundInput): { checks: Check[]; report: Record<string, unknown> } {
  const s = restateAll(r);
  return { checks: s.checks, report: { round: 1, ...s.report, waived: s.waived } };
}

export function round2(r: RoundInput & { round1: GateReport; round1Vouched: Record<string, string> }): {
  checks: Check[];
  report: Record<string, unknown>;
} {
  const s = restateAll(r);
  const now = new Map<string, string>([...r.artifacts, ...r.reports].map((f) => [f.path, f.sha256]));
  const changed = Object.entries(r.round1Vouched)
    .filter(([p, sha]) => now.has(p) && now.get(p) !== sha)
    .map(([p]) => p);
  const notRechecked = Object.keys(r.round1Vouched).filter((p) => !now.has(p));
  const failedInRound1 = r.round1.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  const round1Waived = r.round1.checks.filter((c) => c.status === 'waived').map((c) => c.name);
  const waivedBoth = [...new Set([...round1Waived.map((n) => `round1: ${n}`), ...s.waived])];
  const noWaivers = check(
    'waived_checks',
    waivedBoth.length,
    '==',
    0,
    'prod accepts no waived check in either round (the report lists them under "waived"): make each one pass',
  );
  const checks = [
    check(
      'round1.profile',
      r.round1.profile,
      '==',
      r.profile,
      `round 1 must come from profile ${r.profile}: rebuild round1 in this profile`,
    ),
    check('round1.failed_checks', failedInRound1, '==', [], 'round 1 did not pass: fix its failing checks first'),
    check('vouched.changed', changed, '==', [], 'a file round 1 vouched for has changed since: rebuild round1'),
    check(
      'vouched.not_rechecked',
      notRechecked,
      '==',
      [],
      'declare every file round 1 vouched for as an input of round2_pass',
    ),
    r.profile === 'prod' ? noWaivers : waive(noWaivers, `profile ${r.profile}: waivers allowed, listed`),
    ...s.checks,
  ];
  const vouched = { ...(s.report.vouched as Record<string, string>), [r.round1.path]: r.round1.sha256 };
  return {
    checks,
    report: {
      round: 2,
      ...s.report,
      vouched,
      round1: { path: r.round1.path, sha256: r.round1.sha256, pass: r.round1.pass, waived: round1Waived },
      waived: waivedBoth,
    },
  };
}
