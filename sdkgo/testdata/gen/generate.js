#!/usr/bin/env node
// Writes the evaluation test vectors in ../vectors/ (format: docs/reference/evaluation.md,
// Test vectors).
//
// Why a Node script: the expected rollout and variant outcomes must not come from the Go
// evaluator they test. This script hashes with two independent JavaScript implementations of
// MurmurHash3 x86 32-bit (npm "murmurhash" and "murmurhash3js-revisited", pinned in
// package.json), refuses to run unless both reproduce published reference values and agree on
// every input, and implements the bucket arithmetic of docs/reference/evaluation.md, Buckets,
// itself. Outcomes that need no hash (operators, prerequisites, disabled values) are written
// out by hand from the rules of docs/reference/evaluation.md.
//
// Usage: npm ci && node generate.js            (writes ../vectors/*.json)
//        node generate.js --hash-inputs        (prints "hex<TAB>input" for every hash used,
//                                               for a cross-check with another implementation)
'use strict';

const fs = require('fs');
const path = require('path');
const murmurhash = require('murmurhash');
const revisited = require('murmurhash3js-revisited');

// ---------------------------------------------------------------------------------------------
// MurmurHash3 x86 32-bit, seed 0, over UTF-8 bytes (docs/reference/evaluation.md, Hashes).

const hashInputs = new Map();

function murmur3(text) {
  const bytes = new TextEncoder().encode(text); // UTF-8
  const a = murmurhash.v3(bytes, 0) >>> 0;
  const b = revisited.x86.hash32(bytes, 0) >>> 0;
  if (a !== b) {
    throw new Error(`murmur3 implementations disagree on ${JSON.stringify(text)}: ${a} vs ${b}`);
  }
  hashInputs.set(text, a);
  return a;
}

// Published reference values of MurmurHash3_x86_32 with seed 0 (SMHasher's algorithm; the
// same values are printed by Debian's libmurmurhash and by Digest::MurmurHash3::PurePerl).
const REFERENCE = [
  ['', 0x00000000],
  ['hello', 0x248bfa47],
  ['The quick brown fox jumps over the lazy dog', 0x2e4ff723],
  ['a', 0x3c2569b2],
  ['abc', 0xb3dd93fa],
  ['abcd', 0x43ed676a],
];
for (const [input, want] of REFERENCE) {
  const got = murmur3(input);
  if (got !== want) {
    throw new Error(`murmur3(${JSON.stringify(input)}) = 0x${got.toString(16)}, want 0x${want.toString(16)}`);
  }
}
hashInputs.clear();

// ---------------------------------------------------------------------------------------------
// The bucket arithmetic of docs/reference/evaluation.md, Buckets, Rollout and Variant selection.

// rolloutBucket is murmur3(flag_key + ":" + user_key) % 100.
function rolloutBucket(flagKey, userKey) {
  return murmur3(`${flagKey}:${userKey}`) % 100;
}

// variantIndex walks the variants by cumulative weight over murmur3(flag_key:user_key:variant) % W.
function variantIndex(flagKey, userKey, variants) {
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  if (total === 0) return -1;
  const bucket = murmur3(`${flagKey}:${userKey}:variant`) % total;
  let cumulative = 0;
  for (let i = 0; i < variants.length; i++) {
    cumulative += variants[i].weight;
    if (bucket < cumulative) return i;
  }
  return -1;
}

function isBoolean(flag) {
  return (flag.flag_type ?? 'boolean') === 'boolean';
}

function disabledResult(flag) {
  if (isBoolean(flag)) return false;
  return flag.disabled_value === undefined ? null : flag.disabled_value;
}

// inRollout is step 5 of the evaluation rules.
function inRollout(flag, userKey) {
  const pct = flag.rollout_percentage ?? null;
  if (pct === null) return true;
  if (pct <= 0) return false;
  if (pct >= 100) return true;
  return rolloutBucket(flag.key, userKey) < pct;
}

// fallthrough is the result of an enabled flag with satisfied prerequisites when no rule
// matched: steps 5 and 6.
function fallthrough(flag, userKey) {
  if (!inRollout(flag, userKey)) return disabledResult(flag);
  if (isBoolean(flag)) return true;
  if (flag.variants && flag.variants.length > 0) {
    const i = variantIndex(flag.key, userKey, flag.variants);
    if (i >= 0) return flag.variants[i].value;
  }
  return flag.default_value === undefined ? null : flag.default_value;
}

// ---------------------------------------------------------------------------------------------
// Helpers to write vectors.

// raw keeps a number's JSON spelling (30.0, 1e3), which JSON.stringify would normalise.
function raw(text) {
  return `@@RAW(${text})@@`;
}

// show names a user key in a case name: long keys are shortened, and the name of a case
// never holds a slash, which Go's test runner reads as a subtest separator.
function show(userKey) {
  const bytes = new TextEncoder().encode(userKey).length;
  const text = userKey.length > 32 ? `${userKey.slice(0, 12)}…${userKey.slice(-8)} (${bytes} bytes)` : userKey;
  return JSON.stringify(text);
}

function flag(key, props = {}) {
  return { key, is_enabled: true, ...props };
}

function kase(name, flagKey, userKey, expected, attributes) {
  const c = { name, flag_key: flagKey, user_key: userKey };
  if (attributes !== undefined) c.attributes = attributes;
  c.expected = expected;
  return c;
}

function rule(attribute, operator, values, extra = {}) {
  return { attribute, operator, values, ...extra };
}

// Fixed user keys: plain ids, UUIDs, e-mail addresses, non-ASCII text, the anonymous user.
const USERS = [];
for (let i = 0; i < 24; i++) USERS.push(`user-${i}`);
USERS.push(
  '3f1c9a52-7d1e-4f0b-9e0c-2b6d8a4c1e77',
  'b0a7e5d4-1c2f-4e3a-8b9d-6f5e4d3c2b1a',
  'alice@example.com',
  'bob@example.org',
  'ünïcødé-user',
  '用户-42',
  'emoji-😀-user',
  '',
);

// A user key longer than any stack buffer an implementation might use for the hash input.
const LONG_USER = 'long-user-' + 'x'.repeat(300);

// findUser returns the first of probe-0, probe-1, ... that satisfies pred, to put a rare
// outcome (bucket 0 at 1%, bucket 99 at 99%) into the vectors.
function findUser(pred, prefix = 'probe-') {
  for (let i = 0; i < 100000; i++) {
    if (pred(`${prefix}${i}`)) return `${prefix}${i}`;
  }
  throw new Error('no user found');
}

const files = [];

// ---------------------------------------------------------------------------------------------
// operators.json: docs/reference/evaluation.md, Rules, Text form, Numbers and Operators.
{
  const flags = [];
  const cases = [];
  // Boolean flags at rollout 0: a rule match is the only way to true, so expected true/false
  // says exactly whether the rule matched.
  const op = (key, r) => {
    flags.push(flag(key, { rollout_percentage: 0, rules: [r] }));
    return key;
  };
  const check = (key, name, attributes, expected) => cases.push(kase(name, key, 'user-1', expected, attributes));

  const eq = op('op-equals', rule('plan', 'equals', ['pro', 'team']));
  check(eq, 'equals: string equal to the first value', { plan: 'pro' }, true);
  check(eq, 'equals: string equal to the second value', { plan: 'team' }, true);
  check(eq, 'equals: comparison is case-sensitive', { plan: 'Pro' }, false);
  check(eq, 'equals: a prefix is not equal', { plan: 'pr' }, false);
  check(eq, 'equals: empty string', { plan: '' }, false);
  check(eq, 'equals: attribute names are case-sensitive', { Plan: 'pro' }, false);
  check(eq, 'equals: missing attribute fails', { other: 'pro' }, false);
  check(eq, 'equals: no attributes at all fails', undefined, false);
  check(eq, 'equals: null attribute counts as missing', { plan: null }, false);
  check(eq, 'equals: object attribute never matches', { plan: { name: 'pro' } }, false);
  check(eq, 'equals: array attribute never matches', { plan: ['pro'] }, false);

  const eqNum = op('op-equals-number', rule('age', 'equals', ['30', '30.5', '1000', '-2']));
  check(eqNum, 'equals: integer number in shortest form', { age: 30 }, true);
  check(eqNum, 'equals: number written 30.0 is 30', { age: raw('30.0') }, true);
  check(eqNum, 'equals: fractional number', { age: 30.5 }, true);
  check(eqNum, 'equals: number written 1e3 is 1000', { age: raw('1e3') }, true);
  check(eqNum, 'equals: negative number', { age: -2 }, true);
  check(eqNum, 'equals: a different number', { age: 31 }, false);
  check(eqNum, 'equals: number string compares as text', { age: '30' }, true);
  check(eqNum, 'equals: string 30.0 is not the text 30', { age: '30.0' }, false);

  const eqPad = op('op-equals-number-text', rule('score', 'equals', ['30.0', '1e3']));
  check(eqPad, 'equals: number 30.0 has the text form 30, not 30.0', { score: raw('30.0') }, false);
  check(eqPad, 'equals: number 1e3 has the text form 1000, not 1e3', { score: raw('1e3') }, false);
  check(eqPad, 'equals: the string 1e3 is compared as text', { score: '1e3' }, true);

  const eqBool = op('op-equals-bool', rule('beta', 'equals', ['true']));
  check(eqBool, 'equals: boolean true has the text form true', { beta: true }, true);
  check(eqBool, 'equals: boolean false is not true', { beta: false }, false);
  check(eqBool, 'equals: the string true', { beta: 'true' }, true);
  check(eqBool, 'equals: the string True differs in case', { beta: 'True' }, false);

  const ne = op('op-not-equals', rule('country', 'not_equals', ['US']));
  check(ne, 'not_equals: a different value matches', { country: 'FR' }, true);
  check(ne, 'not_equals: the same value does not match', { country: 'US' }, false);
  check(ne, 'not_equals: case differs so it matches', { country: 'us' }, true);
  check(ne, 'not_equals: missing attribute satisfies not_equals', {}, true);
  check(ne, 'not_equals: no attributes at all satisfies not_equals', undefined, true);
  check(ne, 'not_equals: null attribute counts as missing', { country: null }, true);
  check(ne, 'not_equals: object attribute never matches', { country: { code: 'FR' } }, false);
  check(ne, 'not_equals: array attribute never matches', { country: ['FR'] }, false);

  const neMulti = op('op-not-equals-multi', rule('country', 'not_equals', ['US', 'CA']));
  check(neMulti, 'not_equals with two values: equal to one, differs from the other, matches', { country: 'US' }, true);
  check(neMulti, 'not_equals with two values: equal to the other, matches', { country: 'CA' }, true);
  check(neMulti, 'not_equals with two values: differs from both', { country: 'FR' }, true);

  const neSame = op('op-not-equals-same-twice', rule('country', 'not_equals', ['US', 'US']));
  check(neSame, 'not_equals: equal to every value does not match', { country: 'US' }, false);

  const neNum = op('op-not-equals-number', rule('age', 'not_equals', ['30']));
  check(neNum, 'not_equals: number equal in text form', { age: 30 }, false);
  check(neNum, 'not_equals: number 30.0 equals 30 in text form', { age: raw('30.0') }, false);
  check(neNum, 'not_equals: a different number', { age: 31 }, true);
  check(neNum, 'not_equals: boolean text form differs', { age: true }, true);

  const ct = op('op-contains', rule('email', 'contains', ['@example.', 'admin']));
  check(ct, 'contains: substring in the middle', { email: 'alice@example.com' }, true);
  check(ct, 'contains: second value matches', { email: 'root-admin@corp.io' }, true);
  check(ct, 'contains: whole string equal to a value', { email: 'admin' }, true);
  check(ct, 'contains: no substring', { email: 'bob@corp.io' }, false);
  check(ct, 'contains: case-sensitive', { email: 'ALICE@EXAMPLE.COM' }, false);
  check(ct, 'contains: missing attribute fails', {}, false);
  check(ct, 'contains: array attribute never matches', { email: ['alice@example.com'] }, false);

  const ctNum = op('op-contains-number', rule('id', 'contains', ['234', '.5']));
  check(ctNum, 'contains: digits of a number', { id: 12345 }, true);
  check(ctNum, 'contains: fractional part of a number', { id: 7.5 }, true);
  check(ctNum, 'contains: number without the digits', { id: 999 }, false);

  const ctBool = op('op-contains-bool', rule('flag', 'contains', ['ru']));
  check(ctBool, 'contains: inside the text form of true', { flag: true }, true);
  check(ctBool, 'contains: not inside false', { flag: false }, false);

  const ctEmpty = op('op-contains-empty-value', rule('name', 'contains', ['']));
  check(ctEmpty, 'contains: the empty value is inside any present string', { name: 'anything' }, true);
  check(ctEmpty, 'contains: the empty value is inside the empty string', { name: '' }, true);
  check(ctEmpty, 'contains: the empty value still needs the attribute', {}, false);

  const sw = op('op-starts-with', rule('email', 'starts_with', ['admin', 'root']));
  check(sw, 'starts_with: first value', { email: 'admin@corp.io' }, true);
  check(sw, 'starts_with: second value', { email: 'root@corp.io' }, true);
  check(sw, 'starts_with: value in the middle does not count', { email: 'sysadmin@corp.io' }, false);
  check(sw, 'starts_with: case-sensitive', { email: 'Admin@corp.io' }, false);
  check(sw, 'starts_with: missing attribute fails', {}, false);

  const swNum = op('op-starts-with-number', rule('code', 'starts_with', ['-', '12']));
  check(swNum, 'starts_with: negative number starts with a minus', { code: -3 }, true);
  check(swNum, 'starts_with: number digits', { code: 1234 }, true);
  check(swNum, 'starts_with: number not starting with them', { code: 312 }, false);

  const swBool = op('op-starts-with-bool', rule('opt_in', 'starts_with', ['fa']));
  check(swBool, 'starts_with: false starts with fa', { opt_in: false }, true);
  check(swBool, 'starts_with: true does not', { opt_in: true }, false);

  const ew = op('op-ends-with', rule('email', 'ends_with', ['@corp.io', '.gov']));
  check(ew, 'ends_with: first value', { email: 'a@corp.io' }, true);
  check(ew, 'ends_with: second value', { email: 'b@agency.gov' }, true);
  check(ew, 'ends_with: value not at the end', { email: 'a@corp.io.evil.com' }, false);
  check(ew, 'ends_with: case-sensitive', { email: 'a@CORP.IO' }, false);
  check(ew, 'ends_with: missing attribute fails', {}, false);

  const ewNum = op('op-ends-with-number', rule('price', 'ends_with', ['.99', '00']));
  check(ewNum, 'ends_with: fractional number', { price: 9.99 }, true);
  check(ewNum, 'ends_with: integer number', { price: 1500 }, true);
  check(ewNum, 'ends_with: number 10.0 has the text form 10', { price: raw('10.0') }, false);

  const ewBool = op('op-ends-with-bool', rule('active', 'ends_with', ['ue']));
  check(ewBool, 'ends_with: true ends with ue', { active: true }, true);
  check(ewBool, 'ends_with: false does not', { active: false }, false);

  const gt = op('op-greater-than', rule('age', 'greater_than', ['18']));
  check(gt, 'greater_than: bigger integer', { age: 19 }, true);
  check(gt, 'greater_than: equal is not greater', { age: 18 }, false);
  check(gt, 'greater_than: smaller', { age: 17 }, false);
  check(gt, 'greater_than: fractional just above', { age: 18.001 }, true);
  check(gt, 'greater_than: numeric string attribute is parsed', { age: '19' }, true);
  check(gt, 'greater_than: numeric string with a fraction', { age: '18.5' }, true);
  check(gt, 'greater_than: numeric string with an exponent', { age: '1e3' }, true);
  check(gt, 'greater_than: non-numeric string never matches', { age: 'old' }, false);
  check(gt, 'greater_than: empty string never matches', { age: '' }, false);
  check(gt, 'greater_than: boolean is never numeric', { age: true }, false);
  check(gt, 'greater_than: missing attribute fails', {}, false);
  check(gt, 'greater_than: null attribute fails', { age: null }, false);
  check(gt, 'greater_than: object attribute fails', { age: { years: 40 } }, false);
  check(gt, 'greater_than: array attribute fails', { age: [40] }, false);
  check(gt, 'greater_than: negative number', { age: -40 }, false);

  const gtMixed = op('op-greater-than-mixed-values', rule('age', 'greater_than', ['abc', '65']));
  check(gtMixed, 'greater_than: a non-numeric rule value is skipped, the next one matches', { age: 70 }, true);
  check(gtMixed, 'greater_than: below the numeric rule value', { age: 60 }, false);

  const gtBad = op('op-greater-than-non-numeric', rule('age', 'greater_than', ['abc', '']));
  check(gtBad, 'greater_than: only non-numeric rule values never match', { age: 99 }, false);
  check(gtBad, 'greater_than: only non-numeric rule values, string attribute', { age: 'abc' }, false);

  const gtExp = op('op-greater-than-exponent', rule('size', 'greater_than', ['1e2']));
  check(gtExp, 'greater_than: rule value with an exponent', { size: 150 }, true);
  check(gtExp, 'greater_than: below the exponent value', { size: 99.5 }, false);

  const gte = op('op-greater-than-or-equal', rule('age', 'greater_than_or_equal', ['18']));
  check(gte, 'greater_than_or_equal: equal', { age: 18 }, true);
  check(gte, 'greater_than_or_equal: 18.0 equals 18', { age: raw('18.0') }, true);
  check(gte, 'greater_than_or_equal: string 18.0 parses to 18', { age: '18.0' }, true);
  check(gte, 'greater_than_or_equal: bigger', { age: 30 }, true);
  check(gte, 'greater_than_or_equal: smaller', { age: 17.9 }, false);
  check(gte, 'greater_than_or_equal: boolean never numeric', { age: false }, false);

  const lt = op('op-less-than', rule('latency', 'less_than', ['100.5']));
  check(lt, 'less_than: smaller', { latency: 100 }, true);
  check(lt, 'less_than: equal is not less', { latency: 100.5 }, false);
  check(lt, 'less_than: bigger', { latency: 101 }, false);
  check(lt, 'less_than: negative', { latency: -5 }, true);
  check(lt, 'less_than: numeric string', { latency: '99' }, true);
  check(lt, 'less_than: non-numeric string', { latency: 'fast' }, false);
  check(lt, 'less_than: missing attribute fails', {}, false);

  const lte = op('op-less-than-or-equal', rule('version', 'less_than_or_equal', ['2', '10']));
  check(lte, 'less_than_or_equal: equal to the first value', { version: 2 }, true);
  check(lte, 'less_than_or_equal: under the second value only', { version: 7 }, true);
  check(lte, 'less_than_or_equal: equal to the second value', { version: 10 }, true);
  check(lte, 'less_than_or_equal: above both', { version: 11 }, false);
  check(lte, 'less_than_or_equal: numbers, not text: 9 is below 10', { version: '9' }, true);

  const unknown = op('op-unknown', rule('plan', 'matches_regex', ['.*']));
  check(unknown, 'unknown operator never matches', { plan: 'pro' }, false);
  check(unknown, 'unknown operator never matches a missing attribute either', {}, false);

  // Several rules: first match wins; every rule sees the same attributes.
  flags.push(flag('rules-first-match', {
    flag_type: 'string', default_value: 'fallthrough', disabled_value: 'off', rollout_percentage: 0,
    rules: [
      rule('plan', 'equals', ['pro'], { variant: 'first' }),
      rule('age', 'greater_than', ['18'], { variant: 'second' }),
      rule('country', 'not_equals', ['US'], { variant: 'third' }),
    ],
  }));
  const fm = 'rules-first-match';
  cases.push(kase('first matching rule wins over later matching rules', fm, 'user-1', 'first', { plan: 'pro', age: 40, country: 'FR' }));
  cases.push(kase('second rule when the first does not match', fm, 'user-1', 'second', { plan: 'free', age: 40, country: 'US' }));
  cases.push(kase('third rule: not_equals matches a missing country', fm, 'user-1', 'third', { plan: 'free', age: 10 }));
  cases.push(kase('no rule matches: rollout 0 gives the disabled value', fm, 'user-1', 'off', { plan: 'free', age: 10, country: 'US' }));

  files.push({ file: 'operators.json', name: 'targeting rule operators', flags, cases });
}

// ---------------------------------------------------------------------------------------------
// values.json: results per flag type, disabled values, rule variants, not found.
{
  const flags = [];
  const cases = [];
  const c = (...a) => cases.push(kase(...a));

  // A flag exactly as the server streams it, every field present.
  flags.push({
    key: 'full-flag',
    environment_id: '8d3e4f6a-1b2c-4d5e-9f80-1a2b3c4d5e6f',
    is_enabled: true,
    rollout_percentage: null,
    description: 'every field of the API Flag object',
    rules: [{ attribute: 'plan', operator: 'equals', values: ['pro'], segment_key: null, variant: 'pro-banner' }],
    flag_type: 'string',
    default_value: 'banner',
    disabled_value: 'no-banner',
    variants: [],
    prerequisites: [],
    tags: ['ui', 'checkout'],
    owner_email: 'owner@example.com',
    archived_at: null,
    version: 7,
    created_at: '2024-01-02T03:04:05Z',
    updated_at: '2024-02-03T04:05:06.789Z',
  });
  c('full flag object: rule variant', 'full-flag', 'user-1', 'pro-banner', { plan: 'pro' });
  c('full flag object: default value', 'full-flag', 'user-1', 'banner', { plan: 'free' });

  flags.push(flag('archived-flag', { archived_at: '2024-03-01T00:00:00Z' }));
  c('an archived flag evaluates normally', 'archived-flag', 'user-1', true);

  c('flag not found gives false', 'no-such-flag', 'user-1', false);
  c('flag not found gives false for the anonymous user', 'no-such-flag', '', false);
  c('flag keys are case-sensitive', 'FULL-FLAG', 'user-1', false);

  flags.push(flag('bool-no-type'));
  c('flag_type omitted means boolean: enabled is true', 'bool-no-type', 'user-1', true);
  flags.push(flag('bool-no-type-off', { is_enabled: false }));
  c('flag_type omitted means boolean: disabled is false', 'bool-no-type-off', 'user-1', false);

  flags.push(flag('bool-odd-values', { flag_type: 'boolean', default_value: false, disabled_value: true }));
  c('boolean flag ignores default_value false: enabled is true', 'bool-odd-values', 'user-1', true);
  flags.push(flag('bool-odd-values-off', { flag_type: 'boolean', is_enabled: false, default_value: false, disabled_value: true }));
  c('boolean flag ignores disabled_value true: disabled is false', 'bool-odd-values-off', 'user-1', false);
  flags.push(flag('bool-rule-variant', { flag_type: 'boolean', rollout_percentage: 0, rules: [rule('plan', 'equals', ['pro'], { variant: 'ignored' })] }));
  c('boolean flag rule match is true whatever the rule variant', 'bool-rule-variant', 'user-1', true, { plan: 'pro' });
  c('boolean flag with no rule match at rollout 0 is false', 'bool-rule-variant', 'user-1', false, { plan: 'free' });

  const typed = [
    ['string', 'on-text', 'off-text', 'rule-text'],
    ['integer', 42, 0, 7],
    ['json', { theme: 'dark', sizes: [1, 2, 3] }, { theme: 'light' }, [1, 'two', { three: 3 }]],
  ];
  for (const [type, on, off, ruled] of typed) {
    const base = { flag_type: type, default_value: on, disabled_value: off };
    flags.push(flag(`${type}-on`, base));
    c(`${type} flag enabled gives default_value`, `${type}-on`, 'user-1', on);
    flags.push(flag(`${type}-off`, { ...base, is_enabled: false }));
    c(`${type} flag disabled gives disabled_value`, `${type}-off`, 'user-1', off);
    flags.push(flag(`${type}-off-no-disabled-value`, { flag_type: type, default_value: on, is_enabled: false }));
    c(`${type} flag disabled without disabled_value gives null`, `${type}-off-no-disabled-value`, 'user-1', null);
    flags.push(flag(`${type}-off-null-disabled-value`, { flag_type: type, default_value: on, disabled_value: null, is_enabled: false }));
    c(`${type} flag disabled with disabled_value null gives null`, `${type}-off-null-disabled-value`, 'user-1', null);
    flags.push(flag(`${type}-rules`, {
      ...base,
      rollout_percentage: 0,
      rules: [
        rule('plan', 'equals', ['pro'], { variant: ruled }),
        rule('plan', 'equals', ['team']),
        rule('plan', 'equals', ['edu'], { variant: null }),
      ],
    }));
    c(`${type} flag rule with a variant returns the variant`, `${type}-rules`, 'user-1', ruled, { plan: 'pro' });
    c(`${type} flag rule without a variant returns default_value`, `${type}-rules`, 'user-1', on, { plan: 'team' });
    c(`${type} flag rule with variant null returns default_value`, `${type}-rules`, 'user-1', on, { plan: 'edu' });
    c(`${type} flag rule match bypasses rollout 0`, `${type}-rules`, 'anyone', ruled, { plan: 'pro' });
    c(`${type} flag no rule match at rollout 0 gives disabled_value`, `${type}-rules`, 'user-1', off, { plan: 'free' });
    flags.push(flag(`${type}-no-default`, { flag_type: type }));
    c(`${type} flag enabled without default_value gives null`, `${type}-no-default`, 'user-1', null);
  }

  flags.push(flag('string-disabled-rule', {
    flag_type: 'string', is_enabled: false, default_value: 'on', disabled_value: 'off',
    rules: [rule('plan', 'equals', ['pro'], { variant: 'pro' })],
  }));
  c('a disabled flag ignores matching rules', 'string-disabled-rule', 'user-1', 'off', { plan: 'pro' });

  flags.push(flag('json-scalar', { flag_type: 'json', default_value: 'just a string', disabled_value: 12.5 }));
  c('json flag may hold a scalar', 'json-scalar', 'user-1', 'just a string');

  flags.push(flag('integer-written-as-float', { flag_type: 'integer', default_value: raw('5.0') }));
  c('integer default_value written 5.0 is the number 5', 'integer-written-as-float', 'user-1', 5);

  files.push({ file: 'values.json', name: 'values per flag type', flags, cases });
}

// ---------------------------------------------------------------------------------------------
// rollout.json: step 5, buckets computed here.
{
  const flags = [];
  const cases = [];
  const add = (f, users, label) => {
    flags.push(f);
    for (const u of users) {
      const expected = fallthrough(f, u);
      const detail = f.rollout_percentage === undefined || f.rollout_percentage === null
        ? 'no rollout'
        : `bucket ${rolloutBucket(f.key, u)} vs ${f.rollout_percentage}`;
      cases.push(kase(`${label}: user ${show(u)} (${detail})`, f.key, u, expected));
    }
  };

  // A rule match bypasses a 0 % rollout (docs/reference/evaluation.md, Evaluation order).
  flags.push(flag('new-checkout', { rollout_percentage: 0, rules: [rule('plan', 'equals', ['pro'])] }));
  cases.push(kase('rule on plan wins over 0% rollout', 'new-checkout', 'user-17', true, { plan: 'pro', age: 30 }));
  cases.push(kase('0% rollout without a rule match', 'new-checkout', 'user-17', false, { plan: 'free', age: 30 }));

  add(flag('half-rollout', { rollout_percentage: 50 }), USERS, '50% rollout');
  add(flag('quarter-rollout', { rollout_percentage: 25 }), USERS.slice(0, 16), '25% rollout');
  add(flag('one-percent', { rollout_percentage: 1 }),
    [...USERS.slice(0, 8), findUser((u) => rolloutBucket('one-percent', u) === 0)], '1% rollout');
  add(flag('ninety-nine-percent', { rollout_percentage: 99 }),
    [...USERS.slice(0, 8), findUser((u) => rolloutBucket('ninety-nine-percent', u) === 99)], '99% rollout');
  add(flag('zero-rollout', { rollout_percentage: 0 }), ['user-0', 'user-1', ''], '0% rollout lets nobody in');
  add(flag('full-rollout', { rollout_percentage: 100 }), ['user-0', 'user-1', ''], '100% rollout lets everybody in');
  add(flag('null-rollout', { rollout_percentage: null }), ['user-0', 'user-1', ''], 'null rollout lets everybody in');
  add(flag('omitted-rollout'), ['user-0', ''], 'omitted rollout lets everybody in');
  add(flag('long-key-rollout', { rollout_percentage: 50 }),
    [LONG_USER, LONG_USER + 'y', LONG_USER + 'zz', findUser((u) => inRollout({ key: 'long-key-rollout', rollout_percentage: 50 }, u), LONG_USER + '-')],
    '50% rollout with a long user key');
  add(flag('string-rollout', { flag_type: 'string', rollout_percentage: 30, default_value: 'in', disabled_value: 'out' }), USERS.slice(0, 10), '30% rollout of a string flag');
  add(flag('string-rollout-no-disabled', { flag_type: 'string', rollout_percentage: 40, default_value: 'in' }), USERS.slice(10, 16), '40% rollout of a string flag without disabled_value');

  // Rollout with rules: a matching rule bypasses the gate; otherwise the gate applies.
  const gated = flag('rule-and-rollout', { rollout_percentage: 20, rules: [rule('beta', 'equals', ['true'])] });
  flags.push(gated);
  for (const u of USERS.slice(0, 6)) {
    cases.push(kase(`rule match bypasses the 20% gate for ${u}`, gated.key, u, true, { beta: true }));
    cases.push(kase(`no rule match, the 20% gate decides for ${u} (bucket ${rolloutBucket(gated.key, u)})`, gated.key, u, fallthrough(gated, u), { beta: false }));
  }

  // The boundary of step 5: inside when bucket < rollout_percentage.
  const probe = 'user-3';
  const bOut = rolloutBucket('boundary-out', probe);
  add(flag('boundary-out', { rollout_percentage: bOut }), [probe], `rollout equal to the user's bucket leaves the user out`);
  const bIn = rolloutBucket('boundary-in', probe);
  add(flag('boundary-in', { rollout_percentage: bIn + 1 }), [probe], `rollout one above the user's bucket lets the user in`);

  files.push({ file: 'rollout.json', name: 'percentage rollout', flags, cases });
}

// ---------------------------------------------------------------------------------------------
// variants.json: step 6, buckets computed here.
{
  const flags = [];
  const cases = [];
  const add = (f, users, label) => {
    flags.push(f);
    for (const u of users) {
      let detail = '';
      if (inRollout(f, u) && !isBoolean(f) && f.variants && f.variants.length) {
        const total = f.variants.reduce((s, v) => s + v.weight, 0);
        detail = total ? ` (variant bucket ${murmur3(`${f.key}:${u}:variant`) % total} of ${total})` : ' (total weight 0)';
      }
      cases.push(kase(`${label}: user ${show(u)}${detail}`, f.key, u, fallthrough(f, u)));
    }
  };
  const weighted = (...pairs) => pairs.map(([weight, value]) => ({ weight, value }));

  add(flag('variants-631', {
    flag_type: 'string', default_value: 'control', disabled_value: 'off',
    variants: weighted([6, 'sixty'], [3, 'thirty'], [1, 'ten']),
  }), USERS, 'weights 6, 3, 1 (string)');

  add(flag('variants-zero-weights', {
    flag_type: 'string', default_value: 'control',
    variants: weighted([0, 'never-a'], [5, 'b'], [0, 'never-c'], [5, 'd'], [0, 'never-e']),
  }), USERS.slice(0, 16), 'zero weights are never chosen');

  add(flag('variants-all-zero', {
    flag_type: 'string', default_value: 'control',
    variants: weighted([0, 'a'], [0, 'b']),
  }), ['user-0', 'user-1', ''], 'total weight 0 gives default_value');

  add(flag('variants-single', {
    flag_type: 'string', default_value: 'control',
    variants: weighted([3, 'only']),
  }), ['user-0', 'user-5', ''], 'a single variant is always chosen');

  add(flag('variants-integer', {
    flag_type: 'integer', default_value: 0, disabled_value: -1,
    variants: weighted([1, 10], [1, 20], [2, 40]),
  }), USERS.slice(0, 12), 'integer variants weighted 1, 1, 2');

  add(flag('variants-json', {
    flag_type: 'json', default_value: { layout: 'default' },
    variants: weighted([50, { layout: 'grid', columns: 3 }], [50, { layout: 'list' }]),
  }), USERS.slice(0, 12), 'json variants weighted 50, 50');

  add(flag('variants-rollout', {
    flag_type: 'string', default_value: 'control', disabled_value: 'not-in-test', rollout_percentage: 50,
    variants: weighted([1, 'a'], [1, 'b']),
  }), USERS.slice(0, 16), 'variants behind a 50% rollout');

  add(flag('variants-rollout-zero', {
    flag_type: 'string', default_value: 'control', disabled_value: 'not-in-test', rollout_percentage: 0,
    variants: weighted([1, 'a'], [1, 'b']),
  }), ['user-0', 'user-1'], 'variants behind a 0% rollout');

  add(flag('variants-long-key', {
    flag_type: 'string', default_value: 'control',
    variants: weighted([1, 'a'], [1, 'b'], [1, 'c']),
  }), [LONG_USER, LONG_USER + 'y', LONG_USER + 'zz', ...['a', 'b', 'c'].map((v) =>
    findUser((u) => variantIndex('variants-long-key', u, [{ weight: 1 }, { weight: 1 }, { weight: 1 }]) === 'abc'.indexOf(v), LONG_USER + '-'))],
  'variants with a long user key');

  add(flag('variants-large-weights', {
    flag_type: 'string', default_value: 'control',
    variants: weighted([1000000, 'big'], [1, 'tiny'], [2500000, 'bigger']),
  }), USERS.slice(0, 8), 'large weights');

  add(flag('variants-on-boolean', {
    flag_type: 'boolean', rollout_percentage: 50,
    variants: weighted([1, false], [1, 'x']),
  }), USERS.slice(0, 8), 'variants do not apply to boolean flags');

  const ruled = flag('variants-with-rule', {
    flag_type: 'string', default_value: 'control',
    rules: [rule('plan', 'equals', ['pro'], { variant: 'pro-variant' }), rule('plan', 'equals', ['team'])],
    variants: weighted([1, 'a'], [1, 'b']),
  });
  flags.push(ruled);
  for (const u of USERS.slice(0, 4)) {
    cases.push(kase(`a rule variant wins over weighted variants for ${u}`, ruled.key, u, 'pro-variant', { plan: 'pro' }));
    cases.push(kase(`a rule without variant returns default_value, not a weighted variant, for ${u}`, ruled.key, u, 'control', { plan: 'team' }));
    cases.push(kase(`no rule match falls through to the weighted variants for ${u}`, ruled.key, u, fallthrough(ruled, u), { plan: 'free' }));
  }

  const off = flag('variants-disabled', {
    flag_type: 'string', is_enabled: false, disabled_value: 'off', variants: weighted([1, 'a']),
  });
  flags.push(off);
  cases.push(kase('a disabled flag never returns a variant', off.key, 'user-0', 'off'));

  files.push({ file: 'variants.json', name: 'weighted variants', flags, cases });
}

// ---------------------------------------------------------------------------------------------
// prerequisites.json: docs/reference/evaluation.md, Prerequisites and Depth limit.
{
  const flags = [];
  const cases = [];
  const c = (...a) => cases.push(kase(...a));
  const req = (flag_key, required_value) => (required_value === undefined ? { flag_key } : { flag_key, required_value });

  // Chain of exactly 10 hops: chain10-0 -> ... -> chain10-10.
  for (let i = 0; i <= 10; i++) {
    flags.push(flag(`chain10-${i}`, i < 10 ? { prerequisites: [req(`chain10-${i + 1}`)] } : {}));
  }
  c('a chain of 10 prerequisite hops is evaluated normally', 'chain10-0', 'user-1', true);
  c('a chain of 9 hops inside it', 'chain10-1', 'user-1', true);
  // Chain of 11 hops: chain11-0 -> ... -> chain11-11.
  for (let i = 0; i <= 11; i++) {
    flags.push(flag(`chain11-${i}`, i < 11 ? { prerequisites: [req(`chain11-${i + 1}`)] } : {}));
  }
  c('a chain of 11 prerequisite hops fails closed', 'chain11-0', 'user-1', false);
  c('the same chain from its second flag is 10 hops and passes', 'chain11-1', 'user-1', true);
  // Same depth rule for a string flag at the top: the disabled value.
  flags.push(flag('chain11-string-top', { flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('chain11-0')] }));
  c('a string flag on top of an 11-hop chain gets disabled_value', 'chain11-string-top', 'user-1', 'off');
  flags.push(flag('chain10-string-top', { flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('chain10-1')] }));
  c('a string flag on top of a 10-hop chain passes', 'chain10-string-top', 'user-1', 'on');
  // 10 hops where every hop requires the value true.
  for (let i = 0; i <= 10; i++) {
    flags.push(flag(`chainv-${i}`, i < 10 ? { prerequisites: [req(`chainv-${i + 1}`, true)] } : {}));
  }
  c('a chain of 10 hops requiring true on every hop', 'chainv-0', 'user-1', true);

  // Cycles.
  flags.push(flag('cycle-self', { prerequisites: [req('cycle-self')] }));
  c('a flag that is its own prerequisite is unsatisfied', 'cycle-self', 'user-1', false);
  flags.push(flag('cycle-a', { prerequisites: [req('cycle-b')] }));
  flags.push(flag('cycle-b', { prerequisites: [req('cycle-a')] }));
  c('a two-flag cycle is unsatisfied (from a)', 'cycle-a', 'user-1', false);
  c('a two-flag cycle is unsatisfied (from b)', 'cycle-b', 'user-1', false);
  flags.push(flag('cycle-x', { prerequisites: [req('cycle-y')] }));
  flags.push(flag('cycle-y', { prerequisites: [req('cycle-z')] }));
  flags.push(flag('cycle-z', { prerequisites: [req('cycle-x')] }));
  c('a three-flag cycle is unsatisfied', 'cycle-x', 'user-1', false);
  flags.push(flag('above-cycle', { flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('cycle-y')] }));
  c('a flag depending on a cycle is unsatisfied', 'above-cycle', 'user-1', 'off');
  // A cycle stays unsatisfied even where a hop expects the disabled value: fail closed.
  flags.push(flag('cycle-neg-a', { prerequisites: [req('cycle-neg-b', false)] }));
  flags.push(flag('cycle-neg-b', { prerequisites: [req('cycle-neg-a')] }));
  c('a cycle fails closed even when a hop requires the value false', 'cycle-neg-a', 'user-1', false);
  flags.push(flag('cycle-string', { flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('cycle-string', 'off')] }));
  c('a self-cycle fails closed even when it requires its own disabled value', 'cycle-string', 'user-1', 'off');

  // A diamond is not a cycle: top -> left, right; left -> bottom; right -> bottom.
  flags.push(flag('diamond-bottom'));
  flags.push(flag('diamond-left', { prerequisites: [req('diamond-bottom')] }));
  flags.push(flag('diamond-right', { prerequisites: [req('diamond-bottom')] }));
  flags.push(flag('diamond-top', { prerequisites: [req('diamond-left'), req('diamond-right')] }));
  c('a diamond of prerequisites (a shared prerequisite is no cycle)', 'diamond-top', 'user-1', true);

  // Missing, disabled, ordering.
  flags.push(flag('needs-missing', { prerequisites: [req('does-not-exist')] }));
  c('a prerequisite naming a missing flag is unsatisfied', 'needs-missing', 'user-1', false);
  flags.push(flag('needs-missing-string', { flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('does-not-exist', null)] }));
  c('a missing prerequisite is unsatisfied even with required_value null', 'needs-missing-string', 'user-1', 'off');
  flags.push(flag('pre-off', { is_enabled: false }));
  flags.push(flag('pre-on'));
  flags.push(flag('needs-off', { prerequisites: [req('pre-off')] }));
  c('a disabled prerequisite is unsatisfied', 'needs-off', 'user-1', false);
  flags.push(flag('needs-on', { prerequisites: [req('pre-on')] }));
  c('an enabled prerequisite is satisfied', 'needs-on', 'user-1', true);
  flags.push(flag('needs-on-and-off', { prerequisites: [req('pre-on'), req('pre-off')] }));
  c('every prerequisite must be satisfied', 'needs-on-and-off', 'user-1', false);
  flags.push(flag('needs-off-but-rule', {
    flag_type: 'string', default_value: 'on', disabled_value: 'off', rollout_percentage: 0,
    prerequisites: [req('pre-off')], rules: [rule('plan', 'equals', ['pro'], { variant: 'rule' })],
  }));
  c('an unsatisfied prerequisite wins over a matching rule', 'needs-off-but-rule', 'user-1', 'off', { plan: 'pro' });
  flags.push(flag('needs-on-but-disabled', { is_enabled: false, flag_type: 'string', default_value: 'on', disabled_value: 'off', prerequisites: [req('pre-on')] }));
  c('satisfied prerequisites do not enable a disabled flag', 'needs-on-but-disabled', 'user-1', 'off');
  flags.push(flag('needs-off-disabled-too', { is_enabled: false, prerequisites: [req('pre-off')] }));
  c('unsatisfied prerequisite on a disabled flag is still the disabled result', 'needs-off-disabled-too', 'user-1', false);

  // Required values of each type.
  flags.push(flag('needs-off-false', { prerequisites: [req('pre-off', false)] }));
  c('required_value false is met by a disabled boolean prerequisite', 'needs-off-false', 'user-1', true);
  flags.push(flag('needs-on-false', { prerequisites: [req('pre-on', false)] }));
  c('required_value false is not met by an enabled boolean prerequisite', 'needs-on-false', 'user-1', false);
  flags.push(flag('needs-on-true', { prerequisites: [req('pre-on', true)] }));
  c('required_value true is met by an enabled boolean prerequisite', 'needs-on-true', 'user-1', true);
  flags.push(flag('needs-off-true', { prerequisites: [req('pre-off', true)] }));
  c('required_value true is not met by a disabled boolean prerequisite', 'needs-off-true', 'user-1', false);

  flags.push(flag('pre-string', { flag_type: 'string', default_value: 'blue', disabled_value: 'grey' }));
  flags.push(flag('needs-blue', { prerequisites: [req('pre-string', 'blue')] }));
  c('required string value equal', 'needs-blue', 'user-1', true);
  flags.push(flag('needs-red', { prerequisites: [req('pre-string', 'red')] }));
  c('required string value different', 'needs-red', 'user-1', false);
  flags.push(flag('needs-Blue', { prerequisites: [req('pre-string', 'Blue')] }));
  c('required string value compares case-sensitively', 'needs-Blue', 'user-1', false);
  flags.push(flag('pre-string-off', { flag_type: 'string', is_enabled: false, default_value: 'blue', disabled_value: 'grey' }));
  flags.push(flag('needs-grey', { prerequisites: [req('pre-string-off', 'grey')] }));
  c('required_value may be the disabled value of the prerequisite', 'needs-grey', 'user-1', true);
  flags.push(flag('needs-string-off-enabled', { prerequisites: [req('pre-string-off')] }));
  c('without required_value a disabled string prerequisite is unsatisfied', 'needs-string-off-enabled', 'user-1', false);

  flags.push(flag('pre-int', { flag_type: 'integer', default_value: 1 }));
  flags.push(flag('needs-int-1', { prerequisites: [req('pre-int', 1)] }));
  c('required integer value equal', 'needs-int-1', 'user-1', true);
  flags.push(flag('needs-int-1.0', { prerequisites: [req('pre-int', raw('1.0'))] }));
  c('required value 1.0 equals 1 as a JSON number', 'needs-int-1.0', 'user-1', true);
  flags.push(flag('needs-int-2', { prerequisites: [req('pre-int', 2)] }));
  c('required integer value different', 'needs-int-2', 'user-1', false);
  flags.push(flag('needs-int-string', { prerequisites: [req('pre-int', '1')] }));
  c('required value "1" (a string) does not equal the number 1', 'needs-int-string', 'user-1', false);

  flags.push(flag('pre-json', { flag_type: 'json', default_value: { a: 1, b: [1, 2, { c: null }], d: 'x' } }));
  flags.push(flag('needs-json-same', { prerequisites: [req('pre-json', { d: 'x', b: [raw('1.0'), 2, { c: null }], a: 1 })] }));
  c('required json value deep-equal with other key order and 1.0', 'needs-json-same', 'user-1', true);
  flags.push(flag('needs-json-order', { prerequisites: [req('pre-json', { a: 1, b: [2, 1, { c: null }], d: 'x' })] }));
  c('required json value with arrays in another order differs', 'needs-json-order', 'user-1', false);
  flags.push(flag('needs-json-extra', { prerequisites: [req('pre-json', { a: 1, b: [1, 2, { c: null }], d: 'x', e: 0 })] }));
  c('required json value with an extra key differs', 'needs-json-extra', 'user-1', false);
  flags.push(flag('pre-json-array', { flag_type: 'json', default_value: [1, 'two', true, null] }));
  flags.push(flag('needs-json-array', { prerequisites: [req('pre-json-array', [1, 'two', true, null])] }));
  c('required json array equal', 'needs-json-array', 'user-1', true);
  flags.push(flag('needs-json-array-short', { prerequisites: [req('pre-json-array', [1, 'two', true])] }));
  c('required json array shorter differs', 'needs-json-array-short', 'user-1', false);

  flags.push(flag('pre-null', { flag_type: 'string', is_enabled: false, default_value: 'on' }));
  flags.push(flag('needs-null', { prerequisites: [req('pre-null', null)] }));
  c('required_value null is met by a prerequisite evaluating to null', 'needs-null', 'user-1', true);
  flags.push(flag('needs-null-of-string', { prerequisites: [req('pre-string', null)] }));
  c('required_value null is not met by a string value', 'needs-null-of-string', 'user-1', false);
  flags.push(flag('needs-null-of-bool', { prerequisites: [req('pre-off', null)] }));
  c('required_value null is not met by false', 'needs-null-of-bool', 'user-1', false);

  // Prerequisites see the same user and attributes.
  flags.push(flag('pre-pro-only', { rollout_percentage: 0, rules: [rule('plan', 'equals', ['pro'])] }));
  flags.push(flag('needs-pro', { flag_type: 'string', default_value: 'yes', disabled_value: 'no', prerequisites: [req('pre-pro-only')] }));
  c('the prerequisite is evaluated with the same attributes (match)', 'needs-pro', 'user-1', 'yes', { plan: 'pro' });
  c('the prerequisite is evaluated with the same attributes (no match)', 'needs-pro', 'user-1', 'no', { plan: 'free' });
  flags.push(flag('pre-pro-string', { flag_type: 'string', default_value: 'plain', rules: [rule('plan', 'equals', ['pro'], { variant: 'gold' })] }));
  flags.push(flag('needs-gold', { prerequisites: [req('pre-pro-string', 'gold')] }));
  c('required_value met through the prerequisite rule variant', 'needs-gold', 'user-1', true, { plan: 'pro' });
  c('required_value not met when the prerequisite rule does not match', 'needs-gold', 'user-1', false, { plan: 'free' });

  // Hash-dependent prerequisites: buckets computed here.
  const half = flag('pre-half', { rollout_percentage: 50 });
  const dep = flag('needs-half', { prerequisites: [req('pre-half')] });
  const depFalse = flag('needs-half-out', { prerequisites: [req('pre-half', false)] });
  const depGated = flag('needs-half-gated', { rollout_percentage: 50, prerequisites: [req('pre-half')] });
  flags.push(half, dep, depFalse, depGated);
  for (const u of USERS.slice(0, 12)) {
    const inHalf = inRollout(half, u);
    c(`prerequisite at 50%: user ${show(u)} is ${inHalf ? 'inside' : 'outside'} (bucket ${rolloutBucket(half.key, u)})`, dep.key, u, inHalf);
    c(`required_value false met by users outside the prerequisite's rollout: ${show(u)}`, depFalse.key, u, !inHalf);
    c(`prerequisite and own rollout both gate: ${show(u)} (own bucket ${rolloutBucket(depGated.key, u)})`, depGated.key, u, inHalf && inRollout(depGated, u));
  }
  const color = flag('pre-color', {
    flag_type: 'string', default_value: 'none',
    variants: [{ weight: 1, value: 'red' }, { weight: 1, value: 'green' }, { weight: 1, value: 'blue' }],
  });
  const needsBlue = flag('needs-color-blue', { flag_type: 'integer', default_value: 1, disabled_value: 0, prerequisites: [req('pre-color', 'blue')] });
  flags.push(color, needsBlue);
  for (const u of USERS.slice(0, 12)) {
    const v = fallthrough(color, u);
    c(`required variant blue: user ${show(u)} got ${v}`, needsBlue.key, u, v === 'blue' ? 1 : 0);
  }

  files.push({ file: 'prerequisites.json', name: 'prerequisites', flags, cases });
}

// ---------------------------------------------------------------------------------------------
// targeting.json: conditions, the set, pattern, version and instant operators, per-rule
// rollouts and splits (docs/reference/evaluation.md), in targeting.js.

files.push(require('./targeting.js')({ flag, kase, raw, rolloutBucket, variantIndex, USERS, show, findUser }));

// ---------------------------------------------------------------------------------------------
// Output.

if (process.argv.includes('--hash-inputs')) {
  for (const [input, hash] of hashInputs) {
    process.stdout.write(`${hash.toString(16).padStart(8, '0')}\t${input}\n`);
  }
  process.exit(0);
}

const outDir = path.join(__dirname, '..', 'vectors');
fs.mkdirSync(outDir, { recursive: true });
let total = 0;
for (const { file, name, flags, cases } of files) {
  const names = new Set();
  for (const c of cases) {
    if (c.name.includes('/')) throw new Error(`${file}: case name with a slash: ${c.name}`);
    if (names.has(c.name)) throw new Error(`${file}: duplicate case name ${c.name}`);
    names.add(c.name);
  }
  const keys = new Set();
  for (const f of flags) {
    if (keys.has(f.key)) throw new Error(`${file}: duplicate flag key ${f.key}`);
    keys.add(f.key);
  }
  let text = JSON.stringify({ name, flags, cases }, null, 2) + '\n';
  text = text.replace(/"@@RAW\(([^)]*)\)@@"/g, '$1');
  fs.writeFileSync(path.join(outDir, file), text);
  total += cases.length;
  console.log(`${file}: ${flags.length} flags, ${cases.length} cases`);
}
console.log(`${total} cases`);
