// The CLI's one definition (packages/engine/src/cli/definition.ts) agrees with the engine's list
// of reserved command names, and no command has two options under one flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  COMMANDS,
  COMMAND_NAMES,
  GLOBAL_OPTIONS,
  VALUE_FLAGS,
  parseArgsOptions,
} from '../../packages/engine/src/cli/definition.ts';
import { ENGINE_COMMANDS } from '../../packages/engine/src/config/engine-commands.ts';

test('every engine command name a pipeline may not shadow is defined, and nothing else', () => {
  assert.deepEqual([...COMMAND_NAMES].sort(), [...ENGINE_COMMANDS].sort());
});

test('no command has two options under one long or short flag', () => {
  for (const c of COMMANDS) {
    const flags = [...c.options, ...GLOBAL_OPTIONS].flatMap((o) => [
      `--${o.long}`,
      ...(o.short ? [`-${o.short}`] : []),
    ]);
    assert.equal(new Set(flags).size, flags.length, `${c.name}: ${flags.join(' ')}`);
  }
});

test('the plain build parses its value options with parseArgs, and a value flag is known as one', () => {
  const o = parseArgsOptions('build');
  assert.deepEqual(o.jobs, { type: 'string', short: 'j' });
  assert.deepEqual(o['dry-run'], { type: 'boolean', short: 'n' });
  assert.equal(o.wait, undefined, '--wait[=SECONDS] is read before parsing');
  for (const f of ['-j', '--jobs', '-C', '--format', '--remote-cache']) assert.ok(VALUE_FLAGS.has(f), f);
  assert.ok(!VALUE_FLAGS.has('--wait'));
});
