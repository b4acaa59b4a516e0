// Coverage of a declared set of labels (roles, styles) by the labels actually used:
//   count = |used ∩ declared| (the number a gate compares), fraction = count / |declared|,
//   missing = declared labels never used, unexpected = used labels that were never declared.
export interface Coverage {
  declared: number;
  count: number;
  fraction: number;
  missing: string[];
  unexpected: string[];
}

export function coverage(declared: Iterable<string>, used: Iterable<string>): Coverage {
  const d = new Set(declared);
  const u = new Set(used);
  const count = [...d].filter((x) => u.has(x)).length;
  return {
    declared: d.size,
    count,
    fraction: d.size === 0 ? 0 : count / d.size,
    missing: [...d].filter((x) => !u.has(x)).sort(),
    unexpected: [...u].filter((x) => !d.has(x)).sort(),
  };
}
