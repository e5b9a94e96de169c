// targeting.json: docs/reference/evaluation.md (conditions, not_in, not_contains, regex,
// semver_*, before/after, per-rule rollout_percentage and variants, the number text form).
//
// Expected outcomes never come from the Go evaluator. They are computed here by:
// - semver_*: npm "semver" (pinned in package.json) for precedence, behind a syntax check with
//   the regular expression that semver.org publishes for SemVer 2.0.0 (node-semver itself
//   trims whitespace, which docs/reference/evaluation.md, Versions, forbids) plus the one leading "v" and the 2^53−1
//   limit; numeric pre-release identifiers beyond 2^53−1, which node-semver compares as
//   floats, are compared with BigInt instead (and the two must agree everywhere else);
// - regex: JavaScript's RegExp, on ASCII patterns and texts in the syntax RE2 and JavaScript
//   share (classes, anchors, quantifiers, alternation, (?:) groups, \d \w \b), so that both
//   engines give the same answer;
// - before/after: the small parser below, BigInt nanoseconds, JavaScript's Date for the
//   calendar, and the exact binary value of a double for epoch milliseconds;
// - the number text form: Number.prototype.toExponential (shortest digits), written out in
//   plain decimal here;
// - rollouts and splits: the bucket functions of generate.js (two MurmurHash3 implementations).
// Some cases also carry the outcome written by hand; the generator stops if it disagrees.
'use strict';

const semver = require('semver');

module.exports = function targeting({ flag, kase, raw, rolloutBucket, variantIndex, USERS, show, findUser }) {
  const flags = [];
  const cases = [];

  // ---------------------------------------------------------------------------------------
  // Attribute values as an SDK sees them after JSON decoding.

  const RAW = /^@@RAW\((.*)\)@@$/;
  function decoded(v) {
    if (typeof v === 'string') {
      const m = RAW.exec(v);
      if (m) return JSON.parse(m[1]);
    }
    return v;
  }

  // plainDecimal writes a finite double in plain decimal with the shortest digits that
  // identify it (docs/reference/evaluation.md, Text form: 1e21 → 1000000000000000000000).
  function plainDecimal(x) {
    if (x === 0) return '0';
    const sign = x < 0 ? '-' : '';
    const [mant, expText] = Math.abs(x).toExponential().split('e');
    const digits = mant.replace('.', '');
    const point = Number(expText) + 1; // digits before the decimal point
    let text;
    if (point <= 0) text = '0.' + '0'.repeat(-point) + digits;
    else if (point >= digits.length) text = digits + '0'.repeat(point - digits.length);
    else text = digits.slice(0, point) + '.' + digits.slice(point);
    return sign + text;
  }
  const known = [[1e21, '1000000000000000000000'], [2 ** 70, '1180591620717411300000'], [1e-7, '0.0000001'], [-0, '0'], [30.5, '30.5'], [-2, '-2'], [123e-20, '0.00000000000000000123']];
  for (const [x, want] of known) {
    if (plainDecimal(x) !== want) throw new Error(`plainDecimal(${x}) = ${plainDecimal(x)}, want ${want}`);
  }

  // textForm is the attribute's text form, or null when it has none (objects, arrays).
  function textForm(v) {
    if (typeof v === 'string') return v;
    if (typeof v === 'boolean') return String(v);
    if (typeof v === 'number') return plainDecimal(v);
    return null;
  }

  // ---------------------------------------------------------------------------------------
  // Semantic versions.

  // The regular expression semver.org publishes for SemVer 2.0.0.
  const SEMVER_ORG = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
  const MAX_SAFE = 2n ** 53n - 1n;

  // version returns the text without its "v" when it is a version by
  // docs/reference/evaluation.md, Versions.
  function version(text) {
    if (typeof text !== 'string') return null;
    const t = text.startsWith('v') ? text.slice(1) : text;
    const m = SEMVER_ORG.exec(t);
    if (!m) return null;
    if ([m[1], m[2], m[3]].some((n) => BigInt(n) > MAX_SAFE)) return null;
    return t;
  }

  // compareBig is SemVer 2.0.0 precedence with BigInt numbers.
  function compareBig(a, b) {
    const pa = SEMVER_ORG.exec(a);
    const pb = SEMVER_ORG.exec(b);
    for (let i = 1; i <= 3; i++) {
      const x = BigInt(pa[i]);
      const y = BigInt(pb[i]);
      if (x !== y) return x < y ? -1 : 1;
    }
    const ra = pa[4];
    const rb = pb[4];
    if (ra === rb) return 0;
    if (ra === undefined) return 1;
    if (rb === undefined) return -1;
    const ia = ra.split('.');
    const ib = rb.split('.');
    for (let i = 0; i < Math.min(ia.length, ib.length); i++) {
      const na = /^\d+$/.test(ia[i]);
      const nb = /^\d+$/.test(ib[i]);
      if (na && nb) {
        const x = BigInt(ia[i]);
        const y = BigInt(ib[i]);
        if (x !== y) return x < y ? -1 : 1;
      } else if (na !== nb) {
        return na ? -1 : 1;
      } else if (ia[i] !== ib[i]) {
        return ia[i] < ib[i] ? -1 : 1;
      }
    }
    return ia.length === ib.length ? 0 : ia.length < ib.length ? -1 : 1;
  }

  function compareVersions(a, b) {
    const big = compareBig(a, b);
    const huge = (v) => (SEMVER_ORG.exec(v)[4] || '').split('.').some((id) => /^\d+$/.test(id) && BigInt(id) > MAX_SAFE);
    if (huge(a) || huge(b)) return big;
    const lib = semver.compare(a, b);
    if (lib !== big) throw new Error(`semver.compare(${a}, ${b}) = ${lib}, BigInt comparison says ${big}`);
    return lib;
  }

  // ---------------------------------------------------------------------------------------
  // Instants as BigInt nanoseconds since the epoch.

  const MIN_NS = -62167219200n * 1000000000n; // 0000-01-01T00:00:00Z
  const MAX_NS = 253402300800n * 1000000000n - 1n; // 9999-12-31T23:59:59.999999999Z
  const inRange = (ns) => (ns >= MIN_NS && ns <= MAX_NS ? ns : null);
  const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/;

  function instantOfText(s) {
    if (/^-?\d+$/.test(s)) return inRange(BigInt(s) * 1000000n);
    const m = RFC3339.exec(s);
    if (!m) return null;
    const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
    if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 59) return null;
    const date = new Date(0);
    date.setUTCFullYear(y, mo - 1, d); // Date.UTC would read years 0–99 as 1900–1999
    if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
    let ns = BigInt(date.getTime()) * 1000000n + BigInt(h * 3600 + mi * 60 + se) * 1000000000n;
    if (m[7]) ns += BigInt(m[7].padEnd(9, '0'));
    if (m[8] !== 'Z') {
      const oh = Number(m[10]);
      const om = Number(m[11]);
      if (oh > 23 || om > 59) return null;
      const off = BigInt(oh * 3600 + om * 60) * 1000000000n;
      ns += m[9] === '+' ? -off : off;
    }
    return inRange(ns);
  }

  // instantOfNumber is the exact value of the double x milliseconds, truncated toward zero
  // to whole nanoseconds.
  function instantOfNumber(x) {
    if (!Number.isFinite(x)) return null;
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0);
    const lo = view.getUint32(4);
    const negative = hi >>> 31 === 1;
    const biased = (hi >>> 20) & 0x7ff;
    let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let exp;
    if (biased === 0) exp = -1074;
    else {
      mant |= 1n << 52n;
      exp = biased - 1075;
    }
    // |x| = mant × 2^exp ms; nanoseconds = mant × 10^6 × 2^exp, truncated.
    let ns = exp >= 0 ? (mant * 1000000n) << BigInt(exp) : (mant * 1000000n) >> BigInt(-exp);
    if (negative) ns = -ns;
    return inRange(ns);
  }

  function instantOf(v) {
    if (typeof v === 'string') return instantOfText(v);
    if (typeof v === 'number') return instantOfNumber(v);
    return null;
  }

  // ---------------------------------------------------------------------------------------
  // Conditions, rules and flags (docs/reference/evaluation.md, Evaluation order, Rules and
  // Conditions).

  const NEGATIVE = new Set(['not_equals', 'not_in', 'not_contains']);
  const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
  const num = (v) => {
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && DECIMAL.test(v)) {
      const x = Number(v);
      return Number.isFinite(x) ? x : null;
    }
    return null;
  };

  function holds(cond, attrs) {
    const present = attrs !== undefined && Object.prototype.hasOwnProperty.call(attrs, cond.attribute) && attrs[cond.attribute] !== null;
    if (!present) return NEGATIVE.has(cond.operator);
    const v = decoded(attrs[cond.attribute]);
    const values = cond.values;
    const any = (pred) => values.some(pred);
    switch (cond.operator) {
      case 'greater_than':
      case 'greater_than_or_equal':
      case 'less_than':
      case 'less_than_or_equal': {
        const x = num(v);
        if (x === null) return false;
        const cmp = { greater_than: (a, b) => a > b, greater_than_or_equal: (a, b) => a >= b, less_than: (a, b) => a < b, less_than_or_equal: (a, b) => a <= b }[cond.operator];
        return any((s) => num(s) !== null && cmp(x, num(s)));
      }
      case 'before':
      case 'after': {
        const t = instantOf(v);
        const rule = values.map(instantOfText);
        if (t === null || rule.includes(null)) return false;
        return rule.some((u) => (cond.operator === 'before' ? t < u : t > u));
      }
    }
    const s = textForm(v);
    if (s === null) return false;
    switch (cond.operator) {
      case 'equals': return any((x) => s === x);
      case 'not_equals': return any((x) => s !== x);
      case 'contains': return any((x) => s.includes(x));
      case 'starts_with': return any((x) => s.startsWith(x));
      case 'ends_with': return any((x) => s.endsWith(x));
      case 'not_in': return !any((x) => s === x);
      case 'not_contains': return !any((x) => s.includes(x));
      case 'regex':
        for (const p of values) {
          if (!/^[\x20-\x7e]*$/.test(p) || /\(\?[=!<]|\\[1-9]|\\k/.test(p)) throw new Error(`pattern outside the syntax RE2 and JavaScript share: ${p}`);
        }
        if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`regex text must be ASCII: ${s}`);
        return any((p) => new RegExp(p).test(s));
    }
    if (cond.operator.startsWith('semver_')) {
      const a = version(s);
      const rule = values.map(version);
      if (a === null || rule.includes(null)) return false;
      const want = {
        semver_equals: (c) => c === 0, semver_greater_than: (c) => c > 0, semver_greater_than_or_equal: (c) => c >= 0,
        semver_less_than: (c) => c < 0, semver_less_than_or_equal: (c) => c <= 0,
      }[cond.operator];
      return rule.some((b) => want(compareVersions(a, b)));
    }
    return false;
  }

  function ruleConditions(r) {
    const conds = [];
    if (r.attribute) conds.push({ attribute: r.attribute, operator: r.operator, values: r.values });
    return conds.concat(r.conditions || []);
  }

  // expect evaluates an enabled flag without prerequisites: rules with conditions, rule
  // rollouts and splits, then the rollout and the flag's variants.
  function expect(f, userKey, attrs) {
    const boolean = (f.flag_type ?? 'boolean') === 'boolean';
    const def = boolean ? true : f.default_value ?? null;
    for (const r of f.rules || []) {
      const conds = ruleConditions(r);
      if (conds.length === 0 || !conds.every((c) => holds(c, attrs))) continue;
      if (r.rollout_percentage !== undefined && r.rollout_percentage < 100) {
        if (r.rollout_percentage <= 0 || rolloutBucket(f.key, userKey) >= r.rollout_percentage) continue;
      }
      if (boolean) return true;
      if (r.variants && r.variants.length > 0) {
        const i = variantIndex(f.key, userKey, r.variants);
        if (i >= 0) return r.variants[i].value;
      }
      return r.variant ?? def;
    }
    const pct = f.rollout_percentage ?? null;
    const disabled = boolean ? false : f.disabled_value ?? null;
    if (pct !== null && (pct <= 0 || (pct < 100 && rolloutBucket(f.key, userKey) >= pct))) return disabled;
    if (!boolean && f.variants && f.variants.length > 0) {
      const i = variantIndex(f.key, userKey, f.variants);
      if (i >= 0) return f.variants[i].value;
    }
    return def;
  }

  // check adds a case whose expected value is computed; byHand, when given, must agree.
  function check(f, name, attributes, byHand, userKey = 'user-1') {
    const got = expect(f, userKey, attributes);
    if (byHand !== undefined && got !== byHand) throw new Error(`${name}: computed ${got}, written by hand ${byHand}`);
    cases.push(kase(name, f.key, userKey, got, attributes));
  }

  // op is a boolean flag at rollout 0 with one rule of one condition: true says it matched.
  const op = (key, operator, values, inConditions = false) => {
    const r = inConditions ? { conditions: [{ attribute: 'a', operator, values }] } : { attribute: 'a', operator, values };
    const f = flag(key, { rollout_percentage: 0, rules: [r] });
    flags.push(f);
    return f;
  };

  // ---------------------------------------------------------------------------------------
  // not_in, not_contains, and missing attributes with every negative operator.

  const notIn = op('not-in', 'not_in', ['US', 'CA', '30', 'true']);
  check(notIn, 'not_in: equal to none of the values', { a: 'FR' }, true);
  check(notIn, 'not_in: equal to the first value', { a: 'US' }, false);
  check(notIn, 'not_in: equal to the second value (not_equals would match)', { a: 'CA' }, false);
  check(notIn, 'not_in: case-sensitive', { a: 'us' }, true);
  check(notIn, 'not_in: number text form equal to a value', { a: 30 }, false);
  check(notIn, 'not_in: number 30.0 has the text form 30', { a: raw('30.0') }, false);
  check(notIn, 'not_in: boolean text form equal to a value', { a: true }, false);
  check(notIn, 'not_in: boolean false equal to none', { a: false }, true);
  check(notIn, 'not_in: object attribute never matches', { a: { code: 'FR' } }, false);
  check(notIn, 'not_in: array attribute never matches', { a: ['FR'] }, false);
  const notInCond = op('not-in-condition', 'not_in', ['US', 'CA'], true);
  check(notInCond, 'not_in as a condition: equal to none', { a: 'DE' }, true);
  check(notInCond, 'not_in as a condition: equal to one', { a: 'CA' }, false);

  const notContains = op('not-contains', 'not_contains', ['@corp.', 'admin']);
  check(notContains, 'not_contains: contains none of the values', { a: 'alice@example.com' }, true);
  check(notContains, 'not_contains: contains the first value', { a: 'bob@corp.io' }, false);
  check(notContains, 'not_contains: contains the second value', { a: 'sysadmin@example.com' }, false);
  check(notContains, 'not_contains: case-sensitive', { a: 'ADMIN@example.com' }, true);
  check(notContains, 'not_contains: empty string contains neither', { a: '' }, true);
  check(notContains, 'not_contains: array attribute never matches', { a: ['x'] }, false);
  const ncNum = op('not-contains-number', 'not_contains', ['.5', '99']);
  check(ncNum, 'not_contains: number text form contains .5', { a: 7.5 }, false);
  check(ncNum, 'not_contains: number without the digits', { a: 1234 }, true);
  const ncEmpty = op('not-contains-empty-value', 'not_contains', ['']);
  check(ncEmpty, 'not_contains: the empty value is inside every present text', { a: 'x' }, false);

  const negatives = [['not_equals', ['x']], ['not_in', ['x']], ['not_contains', ['x']]];
  for (const [operator, values] of negatives) {
    for (const inConditions of [false, true]) {
      const where = inConditions ? 'condition' : 'top-level';
      const f = op(`missing-${operator}-${where}`, operator, values, inConditions);
      check(f, `${operator} (${where}): a missing attribute satisfies it`, { other: 'x' }, true);
      check(f, `${operator} (${where}): no attributes at all satisfies it`, undefined, true);
      check(f, `${operator} (${where}): a null attribute counts as missing`, { a: null }, true);
    }
  }
  const positives = [
    ['equals', ['x']], ['contains', ['x']], ['starts_with', ['x']], ['ends_with', ['x']], ['greater_than', ['1']],
    ['greater_than_or_equal', ['1']], ['less_than', ['1']], ['less_than_or_equal', ['1']], ['regex', ['.*']],
    ['semver_equals', ['1.0.0']], ['semver_greater_than', ['1.0.0']], ['semver_greater_than_or_equal', ['1.0.0']],
    ['semver_less_than', ['1.0.0']], ['semver_less_than_or_equal', ['1.0.0']], ['before', ['9999-12-31T23:59:59Z']],
    ['after', ['0000-01-01T00:00:00Z']],
  ];
  for (const [operator, values] of positives) {
    const f = op(`missing-${operator}`, operator, values, true);
    check(f, `${operator}: a missing attribute fails it`, {}, false);
    check(f, `${operator}: a null attribute fails it`, { a: null }, false);
  }

  // ---------------------------------------------------------------------------------------
  // regex.

  const re = op('regex', 'regex', ['^[a-z0-9._-]+@example\\.(com|org)$', 'admin']);
  check(re, 'regex: anchored pattern matches the whole text', { a: 'alice.b@example.com' }, true);
  check(re, 'regex: anchored pattern rejects a suffix', { a: 'alice@example.com.evil' }, false);
  check(re, 'regex: the second pattern matches anywhere', { a: 'root-admin@corp.io' }, true);
  check(re, 'regex: case-sensitive', { a: 'ALICE@EXAMPLE.COM' }, false);
  check(re, 'regex: no pattern matches', { a: 'bob@corp.io' }, false);
  const reNum = op('regex-number', 'regex', ['^\\d{3}$', '^-?0\\.0+1$', '^1(0{21})$']);
  check(reNum, 'regex: on the text form of an integer', { a: 123 }, true);
  check(reNum, 'regex: integer with other digits', { a: 1234 }, false);
  check(reNum, 'regex: 1e-7 is written 0.0000001', { a: 1e-7 }, true);
  check(reNum, 'regex: 1e21 is written with 21 zeros', { a: 1e21 }, true);
  check(reNum, 'regex: 100.0 is written 100', { a: raw('100.0') }, true);
  const reBool = op('regex-bool', 'regex', ['^(true|yes)$']);
  check(reBool, 'regex: boolean true has the text form true', { a: true }, true);
  check(reBool, 'regex: boolean false', { a: false }, false);
  const reClass = op('regex-classes', 'regex', ['^\\w+\\s\\w+$', '\\bbeta\\b', '^x{2,3}$']);
  check(reClass, 'regex: \\w and \\s', { a: 'hello world' }, true);
  check(reClass, 'regex: word boundary', { a: 'the beta group' }, true);
  check(reClass, 'regex: no word boundary inside a word', { a: 'alphabetagamma' }, false);
  check(reClass, 'regex: bounded repetition', { a: 'xxx' }, true);
  check(reClass, 'regex: beyond the bound', { a: 'xxxx' }, false);
  check(reClass, 'regex: object attribute never matches', { a: { x: 'beta' } }, false);
  const reEmpty = op('regex-empty', 'regex', ['']);
  check(reEmpty, 'regex: the empty pattern matches any present text', { a: 'anything' }, true);
  check(reEmpty, 'regex: the empty pattern matches the empty text', { a: '' }, true);

  // ---------------------------------------------------------------------------------------
  // semver_*.

  const sv = (key, operator, values) => op(key, operator, values, true);
  const eq = sv('semver-equals', 'semver_equals', ['1.2.3']);
  check(eq, 'semver_equals: equal', { a: '1.2.3' }, true);
  check(eq, 'semver_equals: v prefix on the attribute', { a: 'v1.2.3' }, true);
  check(eq, 'semver_equals: build metadata is ignored', { a: '1.2.3+build.7' }, true);
  check(eq, 'semver_equals: a pre-release is not its release', { a: '1.2.3-rc.1' }, false);
  check(eq, 'semver_equals: uppercase V is not a prefix', { a: 'V1.2.3' }, false);
  check(eq, 'semver_equals: two v are not a prefix', { a: 'vv1.2.3' }, false);
  check(eq, 'semver_equals: = is not a prefix', { a: '=1.2.3' }, false);
  check(eq, 'semver_equals: leading whitespace is not trimmed', { a: ' 1.2.3' }, false);
  check(eq, 'semver_equals: trailing whitespace is not trimmed', { a: '1.2.3 ' }, false);
  check(eq, 'semver_equals: a partial version is none', { a: '1.2' }, false);
  check(eq, 'semver_equals: leading zero in the core is none', { a: '1.02.3' }, false);
  check(eq, 'semver_equals: four parts are none', { a: '1.2.3.4' }, false);
  check(eq, 'semver_equals: a number attribute is no version', { a: 1.2 }, false);
  const eqV = sv('semver-equals-v', 'semver_equals', ['v1.2.3+meta', '2.0.0-beta']);
  check(eqV, 'semver_equals: v prefix and build metadata on the rule value', { a: '1.2.3' }, true);
  check(eqV, 'semver_equals: the second value', { a: 'v2.0.0-beta+x' }, true);
  check(eqV, 'semver_equals: pre-release identifiers are case-sensitive', { a: '2.0.0-Beta' }, false);

  const gte = sv('semver-gte', 'semver_greater_than_or_equal', ['2.4.0']);
  check(gte, 'semver_greater_than_or_equal: equal', { a: '2.4.0' }, true);
  check(gte, 'semver_greater_than_or_equal: 2.10.0 is above 2.4.0 (numbers, not text)', { a: '2.10.0' }, true);
  check(gte, 'semver_greater_than_or_equal: a pre-release of 2.4.0 is below it', { a: '2.4.0-rc.1' }, false);
  check(gte, 'semver_greater_than_or_equal: 2.3.99 is below', { a: '2.3.99' }, false);
  check(gte, 'semver_greater_than_or_equal: 3.0.0-alpha is above', { a: '3.0.0-alpha' }, true);
  check(gte, 'semver_greater_than_or_equal: major 2^53-1 is a version', { a: '9007199254740991.0.0' }, true);
  check(gte, 'semver_greater_than_or_equal: major 2^53 is no version', { a: '9007199254740992.0.0' }, false);
  check(gte, 'semver_greater_than_or_equal: patch 2^53 is no version', { a: '3.0.9007199254740992' }, false);
  check(gte, 'semver_greater_than_or_equal: not a version at all', { a: 'latest' }, false);
  check(gte, 'semver_greater_than_or_equal: empty text', { a: '' }, false);

  // The precedence example of SemVer 2.0.0, section 11.
  const chain = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
  for (let i = 1; i < chain.length; i++) {
    const f = sv(`semver-gt-${chain[i - 1]}`, 'semver_greater_than', [chain[i - 1]]);
    check(f, `semver_greater_than: ${chain[i]} is above ${chain[i - 1]}`, { a: chain[i] }, true);
    check(f, `semver_greater_than: ${chain[i - 1]} is not above itself`, { a: chain[i - 1] }, false);
    const g = sv(`semver-lt-${chain[i]}`, 'semver_less_than', [chain[i]]);
    check(g, `semver_less_than: ${chain[i - 1]} is below ${chain[i]}`, { a: chain[i - 1] }, true);
    check(g, `semver_less_than: ${chain[i]} is not below itself`, { a: chain[i] }, false);
  }
  const lte = sv('semver-lte', 'semver_less_than_or_equal', ['1.0.0-rc.1', '0.9.0']);
  check(lte, 'semver_less_than_or_equal: equal to a pre-release value', { a: '1.0.0-rc.1+b' }, true);
  check(lte, 'semver_less_than_or_equal: the release is above both values', { a: '1.0.0' }, false);
  check(lte, 'semver_less_than_or_equal: below the second value', { a: 'v0.1.0' }, true);
  const huge = sv('semver-huge-prerelease', 'semver_less_than', ['1.0.0-9007199254740993']);
  check(huge, 'semver_less_than: numeric pre-release identifiers above 2^53 compare exactly', { a: '1.0.0-9007199254740992' }, true);
  check(huge, 'semver_less_than: equal huge numeric pre-release identifiers', { a: '1.0.0-9007199254740993' }, false);
  check(huge, 'semver_less_than: a longer huge identifier is larger', { a: '1.0.0-10000000000000000000000' }, false);
  const bad = [['1.0.0-', 'empty pre-release'], ['1.0.0+', 'empty build'], ['1.0.0-01', 'leading zero in a numeric pre-release identifier'], ['1.0.0-a..b', 'empty identifier'], ['1.0.0-a_b', 'underscore'], ['-1.0.0', 'negative major']];
  const anyVersion = sv('semver-any', 'semver_greater_than_or_equal', ['0.0.0']);
  check(anyVersion, 'semver_greater_than_or_equal 0.0.0: a leading zero in build metadata is allowed', { a: '1.0.0+001' }, true);
  check(anyVersion, 'semver_greater_than_or_equal 0.0.0: hyphens in identifiers are allowed', { a: '1.0.0-x-y-z.--' }, true);
  for (const [text, why] of bad) check(anyVersion, `semver_greater_than_or_equal 0.0.0: ${why} makes no version`, { a: text }, false);

  // ---------------------------------------------------------------------------------------
  // before / after.

  const before = op('before', 'before', ['2024-03-01T00:00:00Z']);
  check(before, 'before: one nanosecond earlier', { a: '2024-02-29T23:59:59.999999999Z' }, true);
  check(before, 'before: the same instant is not before', { a: '2024-03-01T00:00:00Z' }, false);
  check(before, 'before: the same instant in another time zone', { a: '2024-03-01T01:00:00+01:00' }, false);
  check(before, 'before: the offset -00:00 is UTC', { a: '2024-02-29T23:59:59-00:00' }, true);
  check(before, 'before: a negative offset moves the instant later', { a: '2024-02-29T23:30:00-01:00' }, false);
  check(before, 'before: a positive offset moves the instant earlier', { a: '2024-03-01T05:29:59+05:30' }, true);
  check(before, 'before: one fraction digit', { a: '2024-02-29T23:59:59.9Z' }, true);
  check(before, 'before: epoch milliseconds as a number', { a: 1709251199999 }, true);
  check(before, 'before: epoch milliseconds of the same instant', { a: 1709251200000 }, false);
  check(before, 'before: epoch milliseconds as digits', { a: '1709251199999' }, true);
  check(before, 'before: negative epoch milliseconds are before 1970', { a: -1 }, true);
  check(before, 'before: negative epoch milliseconds as text', { a: '-86400000' }, true);
  check(before, 'before: year 0000 is an instant', { a: '0000-01-01T00:00:00Z' }, true);
  check(before, 'before: an offset that puts the instant before year 0000 makes no instant', { a: '0000-01-01T00:00:00+00:01' }, false);
  check(before, 'before: a boolean is no instant', { a: true }, false);
  check(before, 'before: an object is no instant', { a: { t: 0 } }, false);
  const noInstant = [
    ['2024-01-01', 'a date alone'], ['2024-01-01 00:00:00Z', 'a space separator'], ['2024-01-01t00:00:00Z', 'a lowercase t'],
    ['2024-01-01T00:00:00z', 'a lowercase z'], ['2024-01-01T00:00:00', 'no time zone'], ['2016-12-31T23:59:60Z', 'a leap second'],
    ['2024-01-01T24:00:00Z', 'hour 24'], ['2024-01-01T00:00:00.1234567890Z', 'ten fraction digits'], ['2024-01-01T00:00:00.Z', 'an empty fraction'],
    ['2023-02-29T00:00:00Z', '29 February of a common year'], ['2024-04-31T00:00:00Z', '31 April'], ['2024-01-01T00:00:00+24:00', 'offset hour 24'],
    ['2024-01-01T00:00:00+0100', 'an offset without a colon'], ['+1709251199999', 'a plus sign'], ['1709251199999.5', 'a fraction in text'],
    ['', 'the empty text'], ['-', 'a lone minus'], ['12345-01-01T00:00:00Z', 'a five-digit year'],
  ];
  for (const [text, why] of noInstant) check(before, `before: ${why} is no instant`, { a: text }, false);
  check(before, 'before: 29 February of a leap year is an instant', { a: '2024-02-29T00:00:00Z' }, true);
  check(before, 'before: 29 February 2000 is an instant', { a: '2000-02-29T00:00:00Z' }, true);

  const after = op('after', 'after', ['1000', '9999-12-31T23:59:59.999999999Z']);
  check(after, 'after: a rule value in epoch milliseconds', { a: 1000.5 }, true);
  check(after, 'after: 1000.000001 ms is exactly 1000 ms and 0.99999999747 ns, truncated to 1000 ms', { a: 1000.000001 }, false);
  check(after, 'after: 1000.000002 ms truncates to 1000 ms and 1 ns', { a: 1000.000002 }, true);
  check(after, 'after: epoch milliseconds written 1.0e3', { a: raw('1.0e3') }, false);
  check(after, 'after: epoch milliseconds as digits with leading zeros', { a: '0001001' }, true);
  check(after, 'after: RFC 3339 one millisecond after', { a: '1970-01-01T00:00:01.001Z' }, true);
  check(after, 'after: RFC 3339 at the rule instant', { a: '1970-01-01T01:00:01+01:00' }, false);
  check(after, 'after: the last instant of year 9999 is after 1000 ms, though not after itself', { a: '9999-12-31T23:59:59.999999999Z' }, true);
  check(after, 'after: epoch milliseconds beyond year 9999 are no instant', { a: 253402300800000 }, false);
  check(after, 'after: the last millisecond of year 9999', { a: 253402300799999 }, true);
  check(after, 'after: an offset that puts the instant past year 9999 makes no instant', { a: '9999-12-31T23:59:59-00:01' }, false);
  const afterNeg = op('after-negative', 'after', ['-1000']);
  check(afterNeg, 'after: -999.9999999 ms truncates toward zero to after -1000 ms', { a: -999.9999999 }, true);
  check(afterNeg, 'after: -1000.0000001 ms truncates toward zero to -1000 ms', { a: -1000.0000001 }, false);
  check(afterNeg, 'after: -1000.000002 ms is before -1000 ms', { a: -1000.000002 }, false);
  check(afterNeg, 'after: digits -999', { a: '-999' }, true);

  // ---------------------------------------------------------------------------------------
  // The number text form (docs/reference/evaluation.md, Text form) with the text operators.

  const text = op('number-text', 'equals', ['1000000000000000000000', '1180591620717411300000', '0.0000001', '0', '123456789012345680000']);
  check(text, 'text form: 1e21 is 1000000000000000000000', { a: 1e21 }, true);
  check(text, 'text form: 2^70 is 1180591620717411300000', { a: 2 ** 70 }, true);
  check(text, 'text form: 2^70 written out exactly is the same number', { a: raw('1180591620717411303424') }, true);
  check(text, 'text form: 1e-7 is 0.0000001', { a: 1e-7 }, true);
  check(text, 'text form: -0 is 0', { a: raw('-0') }, true);
  check(text, 'text form: -0.0 is 0', { a: raw('-0.0') }, true);
  check(text, 'text form: 123456789012345678901 has 17 significant digits', { a: raw('123456789012345678901') }, true);
  check(text, 'text form: 1e-6 is not 0.0000001', { a: 1e-6 }, false);

  // ---------------------------------------------------------------------------------------
  // Conditions combined with a top-level condition, and with one another (AND).

  const and = flag('and', {
    flag_type: 'string', default_value: 'default', disabled_value: 'off', rollout_percentage: 0,
    rules: [
      {
        attribute: 'country', operator: 'equals', values: ['DE', 'AT'], variant: 'dach-enterprise',
        conditions: [
          { attribute: 'plan', operator: 'equals', values: ['enterprise'] },
          { attribute: 'app_version', operator: 'semver_greater_than_or_equal', values: ['2.4.0'] },
        ],
      },
      { conditions: [{ attribute: 'email', operator: 'regex', values: ['@example\\.com$'] }, { attribute: 'signup', operator: 'after', values: ['2024-03-01T00:00:00Z'] }], variant: 'new-example-user' },
      { attribute: 'country', operator: 'not_in', values: ['DE', 'AT', 'CH'], variant: 'elsewhere' },
    ],
  });
  flags.push(and);
  check(and, 'conditions: the top-level condition and every condition hold', { country: 'AT', plan: 'enterprise', app_version: '2.10.0' }, 'dach-enterprise');
  check(and, 'conditions: the top-level condition fails', { country: 'FR', plan: 'enterprise', app_version: '2.10.0' }, 'elsewhere');
  check(and, 'conditions: one condition fails', { country: 'DE', plan: 'free', app_version: '2.10.0' }, 'off');
  check(and, 'conditions: a condition on a missing attribute fails', { country: 'DE', plan: 'enterprise' }, 'off');
  check(and, 'conditions: a pre-release fails the version condition', { country: 'DE', plan: 'enterprise', app_version: '2.4.0-rc.1' }, 'off');
  check(and, 'conditions: a rule of conditions only', { country: 'CH', email: 'a@example.com', signup: '2024-03-02T00:00:00Z' }, 'new-example-user');
  check(and, 'conditions: a rule of conditions only, one fails', { country: 'CH', email: 'a@example.com', signup: 1709251200000 }, 'off');
  check(and, 'conditions: no country satisfies not_in', { email: 'x@corp.io' }, 'elsewhere');

  // ---------------------------------------------------------------------------------------
  // Per-rule rollout_percentage: 0, 100, and users left out going on to the next rule.

  const pro = { attribute: 'plan', operator: 'equals', values: ['pro'] };
  const ruleRollout = (key, pct) => flag(key, {
    flag_type: 'string', default_value: 'default', disabled_value: 'off', rollout_percentage: 0,
    rules: [{ ...pro, rollout_percentage: pct, variant: 'rolled' }, { ...pro, variant: 'next-rule' }],
  });
  const r0 = ruleRollout('rule-rollout-0', 0);
  const r100 = ruleRollout('rule-rollout-100', 100);
  const r30 = ruleRollout('rule-rollout-30', 30);
  const rLast = flag('rule-rollout-last', {
    flag_type: 'integer', default_value: 1, disabled_value: 0, rollout_percentage: 50,
    rules: [{ ...pro, rollout_percentage: 50, variant: 2 }],
  });
  flags.push(r0, r100, r30, rLast);
  for (const u of USERS.slice(0, 12)) {
    check(r0, `rule rollout 0 admits nobody: ${show(u)} goes on to the next rule`, { plan: 'pro' }, 'next-rule', u);
    check(r100, `rule rollout 100 admits everybody: ${show(u)}`, { plan: 'pro' }, 'rolled', u);
    check(r30, `rule rollout 30: ${show(u)} (bucket ${rolloutBucket(r30.key, u)})`, { plan: 'pro' }, rolloutBucket(r30.key, u) < 30 ? 'rolled' : 'next-rule', u);
    check(rLast, `rule rollout 50 then the flag's rollout 50: ${show(u)} (bucket ${rolloutBucket(rLast.key, u)})`, { plan: 'pro' }, undefined, u);
  }
  check(r30, 'rule rollout 30: a user failing the condition is not rolled', { plan: 'free' }, 'off', findUser((u) => rolloutBucket(r30.key, u) < 30));
  check(r30, 'rule rollout 30: bucket 29 is inside', { plan: 'pro' }, 'rolled', findUser((u) => rolloutBucket(r30.key, u) === 29));
  check(r30, 'rule rollout 30: bucket 30 is outside', { plan: 'pro' }, 'next-rule', findUser((u) => rolloutBucket(r30.key, u) === 30));
  const rBool = flag('rule-rollout-bool', { rollout_percentage: 0, rules: [{ ...pro, rollout_percentage: 50 }] });
  flags.push(rBool);
  for (const u of USERS.slice(12, 20)) {
    check(rBool, `boolean flag, rule rollout 50: ${show(u)} (bucket ${rolloutBucket(rBool.key, u)})`, { plan: 'pro' }, rolloutBucket(rBool.key, u) < 50, u);
  }

  // ---------------------------------------------------------------------------------------
  // Per-rule variants: splits with zero weights, and W = 0.

  const split = flag('rule-split', {
    flag_type: 'string', default_value: 'default', disabled_value: 'off', rollout_percentage: 0,
    variants: [{ weight: 1, value: 'flag-a' }, { weight: 1, value: 'flag-b' }],
    rules: [{
      ...pro,
      variants: [{ weight: 0, value: 'never-first' }, { weight: 3, value: 'control' }, { weight: 0, value: 'never-middle' }, { weight: 1, value: 'treatment' }, { weight: 0, value: 'never-last' }],
    }],
  });
  const splitIn = flag('rule-split-in-rollout', {
    flag_type: 'json', default_value: { arm: 'default' }, rollout_percentage: 0,
    rules: [{ ...pro, rollout_percentage: 40, variants: [{ weight: 1, value: { arm: 'a' } }, { weight: 1, value: { arm: 'b' } }] }, { ...pro, variant: { arm: 'left-out' } }],
  });
  const zero = flag('rule-split-zero', {
    flag_type: 'string', default_value: 'default', disabled_value: 'off', rollout_percentage: 0,
    variants: [{ weight: 1, value: 'flag-variant' }],
    rules: [{ ...pro, variants: [{ weight: 0, value: 'never' }, { weight: 0, value: 'never-either' }] }],
  });
  const boolSplit = flag('rule-split-bool', { rollout_percentage: 0, rules: [{ ...pro, variants: [{ weight: 1, value: false }] }] });
  flags.push(split, splitIn, zero, boolSplit);
  const seen = new Set();
  for (const u of USERS) {
    const i = variantIndex(split.key, u, split.rules[0].variants);
    seen.add(i);
    check(split, `rule split with weights 0, 3, 0, 1, 0: ${show(u)} gets variant ${i}`, { plan: 'pro' }, undefined, u);
    check(splitIn, `rule split inside a rule rollout of 40: ${show(u)} (bucket ${rolloutBucket(splitIn.key, u)})`, { plan: 'pro' }, undefined, u);
  }
  if (!seen.has(1) || !seen.has(3) || [0, 2, 4].some((i) => seen.has(i))) throw new Error(`rule split chose ${[...seen]}`);
  check(split, 'rule split: a user failing the rule gets the flag\'s rollout result', { plan: 'free' }, 'off', 'user-3');
  check(zero, 'rule split with all weights 0: the rule returns default_value', { plan: 'pro' }, 'default', 'user-3');
  check(zero, 'rule split with all weights 0: no rule match gives the disabled value at rollout 0', { plan: 'free' }, 'off', 'user-3');
  check(boolSplit, 'rule variants on a boolean flag: a match is true', { plan: 'pro' }, true, 'user-3');

  return { file: 'targeting.json', name: 'conditions, set, pattern, version and instant operators, rule rollouts and splits', flags, cases };
};
