// Pieces the test-only RuleContexts share with the engine's worker (packages/engine/src/runner/
// worker.ts): named outputs (ctx.output(name) or path) and ctx.input(group), the one path of a group.

/** Declared outputs as the worker sees them: the path list, and a name-or-path → path lookup. */
export function declaredOutputs(outputs: Record<string, string> | string[]): { list: string[]; pathOf(nameOrPath: string): string } {
  const named: Record<string, string> = Array.isArray(outputs) ? {} : outputs;
  const list = (Array.isArray(outputs) ? outputs : Object.values(outputs)).map((p) => p.replace(/\/$/, ''));
  return {
    list,
    pathOf(p: string): string {
      const hit = Object.hasOwn(named, p) ? named[p]!.replace(/\/$/, '') : list.includes(p.replace(/\/$/, '')) ? p.replace(/\/$/, '') : undefined;
      if (hit === undefined) throw new Error(`ctx.output('${p}'): not a declared output (declared: ${list.join(', ')})`);
      return hit;
    },
  };
}

/** ctx.input(group): exactly one path, as the worker requires. */
export function oneInput(inputs: (group: string) => string[], group: string): string {
  const v = inputs(group);
  if (v.length !== 1) throw new Error(`ctx.input('${group}'): holds ${v.length} paths, expected exactly one`);
  return v[0]!;
}
