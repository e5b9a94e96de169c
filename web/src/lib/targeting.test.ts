import { checkInstant, checkPattern, checkValue, checkVersion, instantMillis, instantToLocal, localToInstant, valueKind } from "./targeting";

test("valueKind groups the operators by what their values are", () => {
  expect(valueKind("equals")).toBe("text");
  expect(valueKind("not_in")).toBe("text");
  expect(valueKind("greater_than_or_equal")).toBe("number");
  expect(valueKind("regex")).toBe("regex");
  expect(valueKind("semver_less_than_or_equal")).toBe("semver");
  expect(valueKind("before")).toBe("instant");
  expect(valueKind("after")).toBe("instant");
});

test("checkVersion accepts what the server's SemVer parser accepts", () => {
  for (const ok of ["2.4.0", "v2.4.0", "0.0.0", "1.2.3-rc.1", "1.2.3-0.alpha", "1.2.3+build.007", "1.2.3-x-y.z+b", "9007199254740991.0.0", "1.0.0-01a"]) {
    expect(checkVersion(ok), ok).toBeUndefined();
  }
  for (const bad of ["2.4", "2.4.0.1", "V2.4.0", " 2.4.0", "2.4.0 ", "vv1.0.0", "01.0.0", "1.02.0", "1.0.0-", "1.0.0-01", "1.0.0+", "1.0.0-a..b", "1.0.0+a_b", "9007199254740992.0.0", ""]) {
    expect(checkVersion(bad), bad).toBeDefined();
  }
  expect(checkVersion("9007199254740992.0.0")).toMatch(/2\^53/);
});

test("instants: RFC 3339 in the restricted form or epoch milliseconds, years 0000 to 9999", () => {
  expect(instantMillis("2026-03-01T00:00:00Z")).toBe(1772323200000);
  expect(instantMillis("2026-02-28T23:30:00-01:00")).toBe(1772323200000 + 30 * 60 * 1000);
  expect(instantMillis("1772323200001")).toBe(1772323200001);
  expect(instantMillis("-1")).toBe(-1);
  expect(instantMillis("2026-03-01T00:00:00.123456789+00:00")).toBe(1772323200123);
  expect(instantMillis("0000-01-01T00:00:00Z")).toBe(-62167219200000);
  expect(instantMillis("9999-12-31T23:59:59.999999999Z")).toBe(253402300799999);
  for (const bad of [
    "2026-03-01",
    "2026-03-01 00:00:00Z",
    "2026-03-01t00:00:00Z",
    "2026-03-01T00:00:00z",
    "2026-03-01T00:00:60Z",
    "2026-02-29T00:00:00Z",
    "2026-03-01T24:00:00Z",
    "2026-03-01T00:00:00.1234567890Z",
    "2026-03-01T00:00:00+24:00",
    "2026-03-01T00:00:00+0100",
    "0000-01-01T00:30:00+01:00",
    "253402300800000",
    "12345678901234567890",
    "+5",
    "",
  ]) {
    expect(checkInstant(bad), bad).toBeDefined();
  }
  expect(checkInstant("2024-02-29T12:00:00+05:30")).toBeUndefined();
});

test("checkPattern compiles the pattern and refuses what RE2 refuses", () => {
  for (const ok of ["^[^@]+@(acme|globex)\\.com$", "(?i)beta", "(?P<user>\\w+)@", "(?<user>\\w+)@", "\\Aab\\z", "\\pL+", "\\p{Greek}", "[[:alpha:]]+", "a{2,1000}", "\\Q(a)\\E", "[(?=]", "[]a]", "\\x{41}", "(?i:ab)c", "\\.\\-"]) {
    expect(checkPattern(ok), ok).toBeUndefined();
  }
  const bad: [string, RegExp][] = [
    ["(abc", /does not compile/],
    ["a**", /does not compile/],
    ["[a-", /does not compile/],
    ["foo(?=bar)", /look-around/],
    ["(?<!x)y", /look-around/],
    ["(a)\\1", /back-reference/],
    ["(?<n>a)\\k<n>", /back-reference/],
    ["\\u0041", /\\u/],
    ["abc\\Z", /\\Z/],
    ["a{1001}", /1000/],
    ["a\\", /backslash/],
    ["(?#comment)", /unknown group/],
  ];
  for (const [p, why] of bad) expect(checkPattern(p), p).toMatch(why);
});

test("checkValue checks only the operators whose values have a grammar", () => {
  expect(checkValue("equals", "(")).toBeUndefined();
  expect(checkValue("regex", "(")).toMatch(/compile/);
  expect(checkValue("semver_equals", "2.4")).toMatch(/version/);
  expect(checkValue("after", "tomorrow")).toMatch(/instant/);
});

test("a picked local time is sent as RFC 3339 with the browser's offset, and shown back", () => {
  const sent = localToInstant("2026-03-01T09:30");
  expect(sent).toMatch(/^2026-03-01T09:30:00[+-]\d{2}:\d{2}$/);
  expect(checkInstant(sent)).toBeUndefined();
  expect(instantToLocal(sent)).toBe("2026-03-01T09:30:00");
  expect(localToInstant("2026-02-30T10:00")).toBe("");
  expect(localToInstant("")).toBe("");
  // Any accepted form shows as the same local moment.
  expect(instantToLocal(String(instantMillis(sent)))).toBe("2026-03-01T09:30:00");
  expect(instantToLocal("nonsense")).toBe("");
});
