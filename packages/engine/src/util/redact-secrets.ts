// Redaction of secret values (API keys) in every encoding in which text commonly carries them: raw,
// JSON-escaped (once or twice: a JSON body logged inside a JSON string), URL-encoded (percent
// encoding of any subset of the characters, in either hex case — as Python's quote(), RFC 3986
// encoders and form encoding each choose differently), and base64 (standard and URL-safe) —
// including a key inside a larger base64 string (an `Authorization: Basic …` header), found at
// each of the three byte alignments as the run of characters that depend on the key's bytes
// alone. Every occurrence becomes '***'. The one redactor for rule logs, rule errors, summaries,
// ERROR_*.json, the trace, failpacks and the scoring and policy clients' messages.
export const REDACTED = '***';

/** Shorter values are not redacted (they would blank out ordinary words). */
export const MIN_SECRET_LENGTH = 4;
/** A base64 fragment shorter than this is too likely to occur by chance to blank out. */
const MIN_BASE64_FRAGMENT = 8;

function jsonEscaped(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A hex byte as a pattern matching either case ('2F' → '2[fF]'). */
function hexAnyCase(b: number): string {
  return b
    .toString(16)
    .toUpperCase()
    .padStart(2, '0')
    .replace(/[A-F]/g, (c) => `[${c}${c.toLowerCase()}]`);
}

/**
 * The secret URL-encoded in any way: each character raw or percent-encoded (its UTF-8 bytes, hex
 * in either case), a space also as '+'. Covers encodeURIComponent, form encoding, Python's quote()
 * (which leaves '/' raw), RFC 3986 encoders (which also encode !'()*) and mixed-case hex.
 */
function urlPattern(secret: string): string {
  return [...secret]
    .map((ch) => {
      const alts = [escapeRegExp(ch), [...Buffer.from(ch, 'utf8')].map((b) => '%' + hexAnyCase(b)).join('')];
      if (ch === ' ') alts.push('\\+');
      return `(?:${alts.join('|')})`;
    })
    .join('');
}

/** The base64 characters determined by the secret's bytes alone, for each alignment 0, 1, 2. */
function base64Fragments(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const out: string[] = [];
  for (let a = 0; a < 3; a++) {
    const enc = Buffer.concat([Buffer.alloc(a), bytes]).toString('base64');
    const first = Math.ceil((8 * a) / 6);
    const end = Math.floor((8 * (a + bytes.length)) / 6);
    const frag = enc.slice(first, end);
    if (frag.length >= MIN_BASE64_FRAGMENT) out.push(frag, frag.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/** Every encoded form of one secret value to look for (longest first); the redactor also matches any mix of URL encoding (urlPattern). */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const json1 = jsonEscaped(secret);
  forms.add(json1);
  forms.add(jsonEscaped(json1));
  // The common URL encodings, for callers checking text for leaks (the redactor matches them all).
  const uri = encodeURIComponent(secret);
  for (const u of [uri, new URLSearchParams({ k: secret }).toString().slice(2)]) {
    forms.add(u);
    forms.add(u.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  }
  for (const f of base64Fragments(secret)) forms.add(f);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A function replacing every encoded form of the given secret values with '***'. */
export function redactor(secrets: readonly (string | undefined)[]): (s: string) => string {
  const values = [
    ...new Set(secrets.filter((v): v is string => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH)),
  ];
  const forms = [...new Set(values.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (s) => s;
  const url = new RegExp(
    values
      .map(urlPattern)
      .sort((a, b) => b.length - a.length)
      .join('|'),
    'g',
  );
  return (s) => {
    let out = s;
    for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
    return out.replace(url, REDACTED);
  };
}
