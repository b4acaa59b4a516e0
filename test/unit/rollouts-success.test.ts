// Task success metrics (lib/rollouts/success.ts). The HotpotQA expectations are computed by hand
// from the official evaluation script (hotpot_evaluate_v1.py: normalize_answer, f1_score,
// exact_match_score); the working is in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  extractNumber,
  hotpotExactMatch,
  hotpotF1,
  judgeSuccess,
  normalizeAnswer,
  numericMatch,
  parseYesNo,
  yesNoMatch,
} from '../../lib/rollouts/index.ts';

test('HotpotQA normalisation lower-cases, drops ASCII punctuation, removes a/an/the as words and collapses whitespace', () => {
  assert.equal(normalizeAnswer('The Battle of Guam'), 'battle of guam');
  assert.equal(normalizeAnswer('Barack Obama, Jr.'), 'barack obama jr');
  assert.equal(normalizeAnswer('an apple a day'), 'apple day');
  assert.equal(normalizeAnswer('  New\t\nYork  '), 'new york');
  assert.equal(normalizeAnswer('a-b'), 'ab', '"-" is in string.punctuation: removed, no space left');
  assert.equal(normalizeAnswer('theatre'), 'theatre', '"the" inside a word is not an article');
  assert.equal(normalizeAnswer('the_the'), 'thethe', '"_" is punctuation, removed before articles: one word remains');
  assert.equal(
    normalizeAnswer('\u201cquoted\u201d'),
    '\u201cquoted\u201d',
    'curly quotes are not in string.punctuation',
  );
  assert.equal(
    normalizeAnswer('Caf\u00e9 the \u00c9the'),
    'caf\u00e9 \u00e9the',
    "Python's \\b is Unicode-aware: \u00e9the is one word",
  );
  assert.equal(normalizeAnswer('x\u001cy'), 'x y', 'str.split() splits on \\x1c');
  assert.equal(normalizeAnswer('x\ufeffy'), 'x\ufeffy', 'str.split() does not split on U+FEFF');
});

test('HotpotQA exact match compares normalised answers', () => {
  assert.equal(hotpotExactMatch('The Battle of Guam', 'Battle of Guam'), true);
  assert.equal(hotpotExactMatch('Yes', 'yes'), true);
  assert.equal(hotpotExactMatch('Guam', 'Battle of Guam'), false);
});

test('HotpotQA F1 counts shared tokens with multiplicity, as the official f1_score does', () => {
  // "guam" vs "battle of guam": 1 shared, P = 1/1, R = 1/3, F1 = 2·1·(1/3)/(4/3) = 0.5
  assert.equal(hotpotF1('Guam', 'Battle of Guam'), 0.5);
  // "battle of manila" vs "battle of guam": 2 shared, P = R = 2/3, F1 = 2/3
  assert.equal(hotpotF1('the Battle of Manila', 'Battle of Guam'), 2 / 3);
  // "new york new york" vs "new york": new min(2,1) + york min(2,1) = 2, P = 2/4, R = 1, F1 = 2/3
  assert.equal(hotpotF1('New York New York', 'New York'), 2 / 3);
  // "two apples and apple" vs "apple apple": apple min(1,2) = 1, P = 1/4, R = 1/2, F1 = 1/3
  assert.equal(hotpotF1('two apples and an apple', 'apple apple'), 1 / 3);
  assert.equal(hotpotF1('Barack Obama, Jr.', 'barack obama jr'), 1);
  assert.equal(hotpotF1('theatre', 'the atre'), 0);
});

test('HotpotQA F1 is 0 when either side is yes, no or noanswer and they differ', () => {
  assert.equal(hotpotF1('yes indeed', 'yes'), 0, 'the gold is "yes" and the prediction differs: no partial credit');
  assert.equal(hotpotF1('no', 'no way'), 0, 'the prediction is "no" and differs from the gold');
  assert.equal(hotpotF1('no', 'yes'), 0);
  assert.equal(hotpotF1('noanswer', 'noanswer'), 1);
  assert.equal(hotpotF1('Yes.', 'yes'), 1);
});

test('GSM8K success takes the number after #### or else the last number, ignoring commas', () => {
  assert.equal(extractNumber('so the answer is 46.'), 46);
  assert.equal(extractNumber('23 + 23 = 46\n#### 46'), 46);
  assert.equal(extractNumber('#### 1,200 dollars, not 5'), 1200);
  assert.equal(extractNumber('first 3 then 4'), 4);
  assert.equal(extractNumber('-7.5'), -7.5);
  assert.equal(extractNumber('no digits'), null);
  assert.equal(numericMatch('The answer is $1,200.', '1200'), true);
  assert.equal(numericMatch('46.0', '46'), true);
  assert.equal(numericMatch('47', '46'), false);
  assert.equal(numericMatch('I do not know', '46'), false);
});

test('StrategyQA success compares the first normalised token as yes/no', () => {
  assert.equal(parseYesNo('Yes, because speed matters.'), 'yes');
  assert.equal(parseYesNo('false'), 'no');
  assert.equal(parseYesNo('I think yes'), null);
  assert.equal(yesNoMatch('No.', 'no'), true);
  assert.equal(yesNoMatch('yes', 'no'), false);
  assert.equal(yesNoMatch('maybe', 'no'), false);
});

test('judgeSuccess applies each task metric and reports F1 for hotpotqa only', () => {
  assert.deepEqual(judgeSuccess('gsm8k', '#### 46', '46'), { success: true, f1: null });
  assert.deepEqual(judgeSuccess('strategyqa', 'no', 'yes'), { success: false, f1: null });
  assert.deepEqual(judgeSuccess('hotpotqa', 'Guam', 'Battle of Guam'), { success: false, f1: 0.5 });
  assert.deepEqual(judgeSuccess('hotpotqa', 'the battle of guam', 'Battle of Guam'), { success: true, f1: 1 });
});
