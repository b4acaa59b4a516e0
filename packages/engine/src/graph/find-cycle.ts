// Cycle detection over the target graph: returns one cycle as a path [a, b, …, a], or null.
export function findCycle(nodes: readonly string[], deps: (n: string) => readonly string[]): string[] | null {
  const color = new Map<string, 0 | 1 | 2>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    color.set(n, 1);
    stack.push(n);
    for (const d of deps(n)) {
      const c = color.get(d) ?? 0;
      if (c === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (c === 0) {
        const found = visit(d);
        if (found) return found;
      }
    }
    stack.pop();
    color.set(n, 2);
    return null;
  };
  for (const n of nodes) {
    if ((color.get(n) ?? 0) === 0) {
      const found = visit(n);
      if (found) return found;
    }
  }
  return null;
}
