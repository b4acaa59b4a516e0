// Prints diagnostics (usage and configuration errors, exit 64) and internal errors.
import type { Diagnostic } from '../config/usage-error.ts';
import { colourEnabled, painter } from '../util/colour.ts';
import { stderrStream } from '../util/terminal.ts';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export function formatDiagnostic(d: Diagnostic): string {
  const lines = [`rc1-build: error: ${d.headline}`];
  if (d.location) lines.push(`  at ${d.location}`);
  for (const [k, v] of Object.entries(d.context ?? {})) lines.push(`  ${k}: ${v.split('\n').join('\n    ')}`);
  if (d.hint) lines.push(`  hint: ${d.hint}`);
  return lines.join('\n') + '\n';
}

export function printDiagnostics(ds: readonly Diagnostic[], io: Io, json: boolean, exitCode = 64): void {
  const paint = painter(colourEnabled(stderrStream()));
  for (const d of ds) {
    const text = formatDiagnostic(d);
    io.err(
      text.startsWith('rc1-build: error:')
        ? paint(['bold', 'red'], 'rc1-build: error:') + text.slice('rc1-build: error:'.length)
        : text,
    );
  }
  if (json) io.out(JSON.stringify({ event: 'error', exitCode, diagnostics: ds }) + '\n');
}

export function printInternalError(e: unknown, io: Io): void {
  const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
  io.err(
    `rc1-build: ${msg.startsWith('Error: internal error') ? '' : 'internal error: '}${msg}\n  please report this at the rc1-build issue tracker\n`,
  );
}
