// Colours through node:util styleText, only where they help: on a terminal, unless NO_COLOR is set
// (https://no-color.org), and always when FORCE_COLOR is set (to anything but 0/false), as Node
// itself decides. Node 20's styleText colours unconditionally, so the decision is made here.
import { styleText } from 'node:util';

export type Style = Parameters<typeof styleText>[0];
export type Paint = (style: Style, text: string) => string;

export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

const plain: Paint = (_s, t) => t;
// validateStream: false: the decision above is final (Node ≥ 22.13 would check process.stdout again).
const styled: Paint = (s, t) =>
  (styleText as (s: Style, t: string, o?: { validateStream: boolean }) => string)(s, t, { validateStream: false });

export function painter(enabled: boolean): Paint {
  return enabled ? styled : plain;
}
