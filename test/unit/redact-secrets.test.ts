// Redaction finds a secret in every encoding text commonly carries it in: raw, JSON-escaped (once
// and twice), URL-encoded (upper/lower hex, form encoding), base64 and base64url, including inside
// a larger base64 string at each of the three byte alignments (a Basic auth header).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactor, secretForms } from '../../packages/engine/src/util/redact-secrets.ts';

const KEY = 'sk-"quoted"\\back+plus/slash=eq-0123456789';
const redact = redactor([KEY]);

test('the raw, JSON-escaped and doubly JSON-escaped forms are redacted', () => {
  assert.equal(redact(`key ${KEY} end`), 'key *** end');
  assert.equal(redact(JSON.stringify({ auth: `Bearer ${KEY}` })), '{"auth":"Bearer ***"}');
  assert.equal(redact(JSON.stringify({ body: JSON.stringify({ auth: KEY }) })), '{"body":"{\\"auth\\":\\"***\\"}"}');
});

test('URL-encoded forms are redacted: percent encoding in either hex case, and form encoding', () => {
  assert.equal(redact(`https://x/?key=${encodeURIComponent(KEY)}&a=1`), 'https://x/?key=***&a=1');
  assert.equal(redact(`?key=${encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`), '?key=***');
  assert.equal(redact(new URLSearchParams({ key: KEY, a: '1' }).toString()), 'key=***&a=1');
});

test("partial and mixed URL encodings are redacted: quote() leaving / raw, mixed-case hex, RFC 3986 !'()*", () => {
  // Python's urllib.parse.quote(KEY): '/' stays raw, '+' and '"' and '\\' and '=' are encoded.
  const quoted = KEY.replace(/[^A-Za-z0-9_.~/-]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  assert.notEqual(quoted, encodeURIComponent(KEY));
  assert.equal(redact(`GET /v1?key=${quoted} 401`), 'GET /v1?key=*** 401');
  // Mixed-case hex: %2b and %2F in one string.
  const mixed = encodeURIComponent(KEY).replace('%2B', '%2b');
  assert.equal(redact(`key=${mixed}`), 'key=***');
  // Only some characters encoded ('+' encoded, '/' raw, the quote raw).
  const partial = KEY.replace('+', '%2B');
  assert.equal(redact(`[${partial}]`), '[***]');
  // RFC 3986 encoders also encode !'()*, which encodeURIComponent leaves raw.
  const k2 = "key!'(with)*stars-0123";
  const rfc = encodeURIComponent(k2).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  assert.equal(redactor([k2])(`u=${rfc}&v=1`), 'u=***&v=1');
  // A space as '+' (form encoding) or %20.
  assert.equal(redactor(['a key with spaces'])('q=a+key%20with+spaces'), 'q=***');
});

test('base64 of the key is redacted, alone and inside a larger base64 string at every alignment', () => {
  assert.ok(!redact(Buffer.from(KEY).toString('base64')).includes(Buffer.from(KEY).toString('base64').slice(0, 12)));
  for (const prefix of ['', 'u', 'us', 'user:', 'user:x', 'ab:cd:e']) {
    for (const suffix of ['', 'z', 'zz', ':tail']) {
      const b64 = Buffer.from(prefix + KEY + suffix).toString('base64');
      const out = redact(`Authorization: Basic ${b64}`);
      assert.match(out, /\*\*\*/, `${prefix}|${suffix}`);
      // What is left around *** decodes to no more than a few bytes of the key.
      const left = out.replace('Authorization: Basic ', '').split('***');
      assert.ok(
        left.every((part) => part.length <= Math.ceil(((prefix.length + suffix.length + 2) * 4) / 3) + 4),
        `${prefix}|${suffix}: ${out}`,
      );
      const url = Buffer.from(prefix + KEY + suffix).toString('base64url');
      assert.match(redact(url), /\*\*\*/, `base64url ${prefix}|${suffix}`);
    }
  }
});

test('short values and unrelated text are left alone', () => {
  assert.equal(redactor(['abc'])('abc abc'), 'abc abc');
  assert.equal(redactor([undefined, ''])('anything'), 'anything');
  assert.equal(redact('nothing secret here: sk-other'), 'nothing secret here: sk-other');
});

test('every form is distinct from the raw key only where the encoding differs', () => {
  const plain = secretForms('sk-plainkey0123456789');
  assert.ok(plain.includes('sk-plainkey0123456789'));
  assert.ok(plain.length >= 3, 'raw plus base64 fragments');
});
