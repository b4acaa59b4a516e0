// How the console shows a gate's checks (packages/engine/src/report/console-reporter.ts): waived checks as WAIVED
// with the profile's reason, checks that cannot apply as n/a with theirs, both counted apart from
// the passes; a failed gate's table with each failing check's hint; and a gate that failed only
// because nothing in it passed (every check n/a) says so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check, gatePasses, notApplicable, waive } from '../../packages/engine/src/api/index.ts';
import { ConsoleReporter } from '../../packages/engine/src/report/console-reporter.ts';

function printed(checks: ReturnType<typeof check>[]): string {
  let out = '';
  const r = new ConsoleReporter({
    explain: false,
    verbose: false,
    tty: false,
    out: (s) => {
      out += s;
    },
    err: () => {},
  });
  r.emit({ event: 'gate', target: 'g', pass: gatePasses(checks), checks, report: 'reports/g.json', replayed: false });
  return out;
}

test('a passing gate counts passes, WAIVED and n/a checks apart and lists the last two with their reasons', () => {
  const out = printed([
    check('rho', 0.9, '>=', 0.3),
    waive(check('live', false, '==', true), 'profile dev'),
    notApplicable(check('drop', Number.NaN, '>=', 0.2, 'raise alpha'), 'nothing to reduce'),
  ]);
  assert.match(out, /^gate {5}g ok: 1 passed, 1 WAIVED, 1 n\/a · reports\/g\.json\n/);
  assert.match(out, /live +false +== +true +WAIVED \(profile dev\)/);
  assert.match(out, /drop +NaN +>= +0\.2 +n\/a \(nothing to reduce\)/);
  assert.doesNotMatch(out, /hint/);
});

test('a gate whose every check is n/a fails and says that n/a never makes a gate pass', () => {
  const out = printed([notApplicable(check('drop', Number.NaN, '>=', 0.2), 'nothing to reduce')]);
  assert.match(out, /^GATE FAILED g · report reports\/g\.json\n/);
  assert.match(out, /n\/a \(nothing to reduce\)/);
  assert.match(out, /no check passed: checks that are n\/a never make a gate pass on their own/);
});

test('a failed gate shows the hint of each failing check only', () => {
  const out = printed([
    check('rho', 0.1, '>=', 0.3, 'recalibrate'),
    waive(check('live', false, '==', true, 'use the live judge'), 'profile dev'),
  ]);
  assert.match(out, /rho +0\.1 +>= +0\.3 +FAIL\n {6}hint: recalibrate\n/);
  assert.doesNotMatch(out, /use the live judge/);
});
