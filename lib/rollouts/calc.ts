// The `calc` tool of the openai rollout source: evaluates an arithmetic expression the policy
// wrote (numbers with optional commas and decimals, + - * / % ^, parentheses, unary minus) with a
// small recursive-descent parser — never eval. ^ is exponentiation, right-associative; % is the
// remainder. The result is formatted without float noise (at most 10 significant decimals).
export type CalcResult = { ok: true; value: number; text: string } | { ok: false; error: string };

export function evaluate(expression: string): CalcResult {
  const src = expression
    .replace(/(\d),(?=\d{3}\b)/g, '$1')
    .replace(/[×x]/g, '*')
    .replace(/÷/g, '/');
  let i = 0;
  const peek = (): string => {
    while (src[i] === ' ' || src[i] === '\t') i++;
    return src[i] ?? '';
  };
  const fail = (why: string): never => {
    throw new Error(why);
  };

  const primary = (): number => {
    const c = peek();
    if (c === '(') {
      i++;
      const v = sum();
      if (peek() !== ')') fail(`expected ')' at position ${i + 1}`);
      i++;
      return v;
    }
    if (c === '-') {
      i++;
      return -unary();
    }
    if (c === '+') {
      i++;
      return unary();
    }
    const m = /^(?:\d+(?:\.\d*)?|\.\d+)/.exec(src.slice(i));
    if (!m) fail(c === '' ? 'unexpected end of expression' : `unexpected '${c}' at position ${i + 1}`);
    i += m![0].length;
    return Number(m![0]);
  };
  const unary = (): number => primary();
  const power = (): number => {
    const base = unary();
    if (peek() === '^' || src.startsWith('**', i)) {
      i += src[i] === '^' ? 1 : 2;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    for (;;) {
      const c = peek();
      if (c === '*' && src[i + 1] !== '*') {
        i++;
        v *= power();
      } else if (c === '/') {
        i++;
        v /= power();
      } else if (c === '%') {
        i++;
        v %= power();
      } else return v;
    }
  };
  const sum = (): number => {
    let v = product();
    for (;;) {
      const c = peek();
      if (c === '+') {
        i++;
        v += product();
      } else if (c === '-') {
        i++;
        v -= product();
      } else return v;
    }
  };

  try {
    const value = sum();
    if (peek() !== '') fail(`unexpected '${peek()}' at position ${i + 1}`);
    if (!Number.isFinite(value)) fail('the result is not a finite number (division by zero?)');
    return { ok: true, value, text: formatResult(value) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export function formatResult(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toFixed(10)));
}
