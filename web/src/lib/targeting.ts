// Rule operators and key rules shared by the flag, segment and experiment
// screens, which each had their own copy.
import type { Schemas } from "../api/client";

type Operator = Schemas["Operator"];

export const OPERATORS: { value: Operator; label: string }[] = [
  { value: "equals", label: "equals" },
  { value: "not_equals", label: "does not equal" },
  { value: "contains", label: "contains" },
  { value: "starts_with", label: "starts with" },
  { value: "ends_with", label: "ends with" },
  { value: "greater_than", label: ">" },
  { value: "greater_than_or_equal", label: "≥" },
  { value: "less_than", label: "<" },
  { value: "less_than_or_equal", label: "≤" },
  { value: "not_in", label: "is none of" },
  { value: "not_contains", label: "contains none of" },
  { value: "regex", label: "matches pattern" },
  { value: "semver_equals", label: "version =" },
  { value: "semver_greater_than", label: "version >" },
  { value: "semver_greater_than_or_equal", label: "version ≥" },
  { value: "semver_less_than", label: "version <" },
  { value: "semver_less_than_or_equal", label: "version ≤" },
  { value: "before", label: "is before" },
  { value: "after", label: "is after" },
];

export function operatorLabel(op?: Operator): string {
  return OPERATORS.find((o) => o.value === op)?.label ?? op ?? "";
}

// KEY_PATTERN is the server's rule for flag, segment and experiment keys.
export const KEY_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;

// keyFromName turns a name into a valid key ("Checkout v2!" -> "checkout-v2").
export function keyFromName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 100);
}

// ---- Input help for rule values (docs/reference/evaluation.md, Operators) ---
// The checks below follow the server's own parsers (sdkgo/eval: semver.go,
// instant.go, and Go's regexp for patterns), so the editor can say as you
// type what the server would refuse with a 422.

export type ValueKind = "text" | "number" | "regex" | "semver" | "instant";

// valueKind is what an operator's values are: the editor picks the input
// and the check by it.
export function valueKind(op: Operator): ValueKind {
  if (op === "regex") return "regex";
  if (op.startsWith("semver_")) return "semver";
  if (op === "before" || op === "after") return "instant";
  if (op.startsWith("greater_than") || op.startsWith("less_than")) return "number";
  return "text";
}

// negated operators hold when the attribute matches none of their values.
export function isNegated(op: Operator): boolean {
  return op === "not_in" || op === "not_contains";
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// versionCore reads "0" or digits without a leading zero, at most 2^53−1.
function versionCore(s: string): boolean {
  return /^(0|[1-9]\d*)$/.test(s) && BigInt(s) <= MAX_SAFE;
}

// identifiers checks dot-separated SemVer identifiers; in a pre-release a
// numeric identifier has no leading zero.
function identifiers(s: string, pre: boolean): boolean {
  return s.split(".").every((id) => /^[0-9A-Za-z-]+$/.test(id) && !(pre && /^\d+$/.test(id) && /^0\d/.test(id)));
}

// checkVersion returns why text is not a version (Semantic Versioning 2.0.0
// with one optional leading lowercase "v", nothing trimmed), or undefined.
export function checkVersion(text: string): string | undefined {
  const s = text.startsWith("v") ? text.slice(1) : text;
  const m = /^([^.+-]*)\.([^.+-]*)\.([^.+-]*)(?:-([^+]*))?(?:\+(.*))?$/.exec(s);
  const why = "is not a version: MAJOR.MINOR.PATCH with an optional -pre-release and +build (e.g. 2.4.0, v2.4.0-rc.1)";
  if (!m) return why;
  const [, major = "", minor = "", patch = "", pre, build] = m;
  if (![major, minor, patch].every(versionCore)) {
    return [major, minor, patch].some((n) => /^\d+$/.test(n) && !/^0\d/.test(n) && BigInt(n) > MAX_SAFE)
      ? "has a number above 2^53−1"
      : why;
  }
  if (pre !== undefined && !identifiers(pre, true)) return "has an invalid pre-release (dot-separated [0-9A-Za-z-], numbers without leading zeros)";
  if (build !== undefined && !identifiers(build, false)) return "has invalid build metadata (dot-separated [0-9A-Za-z-])";
  return undefined;
}

// Instants must fall in the UTC years 0000 to 9999.
const MIN_MS = -62167219200000n; // 0000-01-01T00:00:00Z
const MAX_MS = 253402300799999n; // 9999-12-31T23:59:59.999Z

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// instantMillis reads an instant as the server does (RFC 3339 in the
// restricted form of docs/reference/evaluation.md, Instants, or epoch
// milliseconds as text) and returns its epoch milliseconds (fraction
// dropped), or undefined.
export function instantMillis(text: string): number | undefined {
  if (/^-?\d+$/.test(text)) {
    const ms = BigInt(text);
    return ms >= MIN_MS && ms <= MAX_MS ? Number(ms) : undefined;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  let offset = 0;
  if (m[8] !== "Z") {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (oh * 60 + om) * (m[9] === "-" ? -1 : 1);
  }
  const base = new Date(0);
  base.setUTCFullYear(y, mo - 1, d); // setUTCFullYear keeps years 0–99 as written
  base.setUTCHours(h, mi - offset, s, 0);
  const ms = base.getTime() + Math.floor(Number(`0.${m[7] ?? "0"}`) * 1000);
  return BigInt(ms) >= MIN_MS && BigInt(ms) <= MAX_MS ? ms : undefined;
}

// checkInstant returns why text is not an instant the server accepts.
export function checkInstant(text: string): string | undefined {
  if (instantMillis(text) !== undefined) return undefined;
  return "is not an instant: an RFC 3339 date-time (2026-03-01T00:00:00Z, or with an offset such as +01:00) or epoch milliseconds, in the years 0000 to 9999";
}

// RE2 escapes Go's regexp accepts after a backslash (letters and digits;
// any other ASCII punctuation may be escaped too).
const RE2_ESCAPES = new Set([..."aftnrvdDsSwWbBAzpPxQ0123456789"]);

// checkPattern returns why a pattern is not one the server's RE2 compiles,
// or undefined. It catches what RE2 refuses and JavaScript would take
// (look-arounds, back-references, unknown escapes such as \u or \Z, repeat
// counts above 1000), then compiles a translation with JavaScript's own
// engine for everything else (unbalanced parentheses, bad repetitions, bad
// classes). A pattern that passes may still be refused by the server, whose
// 422 then shows next to it.
export function checkPattern(p: string): string | undefined {
  let js = "";
  let inClass = false; // inside [...]: parentheses and braces are literal
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (inClass && c === "[" && p[i + 1] === ":") {
      // A POSIX class such as [:alpha:]; JavaScript takes its letters.
      const end = p.indexOf(":]", i + 2);
      if (end > 0) {
        js += "\\w";
        i = end + 1;
        continue;
      }
    }
    if (inClass && c === "]") {
      inClass = false;
      js += c;
      continue;
    }
    if (!inClass && c === "[") {
      inClass = true;
      js += c;
      // A "]" first in the class (after an optional "^") is a literal.
      if (p[i + 1] === "^") js += p[++i];
      if (p[i + 1] === "]") {
        js += "\\]";
        i++;
      }
      continue;
    }
    if (c === "\\") {
      const n = p[i + 1];
      if (n === undefined) return "ends with a lone backslash";
      if (n === "Q") {
        // \Q…\E quotes literally: hand JavaScript the escaped text.
        const end = p.indexOf("\\E", i + 2);
        const lit = p.slice(i + 2, end < 0 ? p.length : end);
        js += lit.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
        i = end < 0 ? p.length : end + 1;
        continue;
      }
      if (/[0-9A-Za-z]/.test(n) && !RE2_ESCAPES.has(n)) {
        if (n === "k") return "uses a back-reference (\\k<…>), which RE2 does not support";
        return `uses the escape \\${n}, which RE2 does not know`;
      }
      if (/[1-9]/.test(n) && !/[0-7]/.test(p[i + 2] ?? "")) return `uses a back-reference (\\${n}), which RE2 does not support`;
      if (n === "A") js += "^";
      else if (n === "z") js += "$";
      else if (n === "p" || n === "P") {
        // Unicode classes (\pL, \p{Greek}): JavaScript checks them only in
        // unicode mode, which refuses other RE2 escapes; stand in a class.
        if (p[i + 2] === "{") {
          const end = p.indexOf("}", i + 3);
          if (end < 0) return "has an unclosed \\p{…} class";
          i = end - 1;
        } else i += 1;
        js += "\\w";
      } else if (n === "x" && p[i + 2] === "{") {
        const end = p.indexOf("}", i + 3);
        if (end < 0 || !/^[0-9A-Fa-f]{1,6}$/.test(p.slice(i + 3, end))) return "has an invalid \\x{…} escape";
        js += "x";
        i = end - 1;
      } else js += c + n;
      i += 1;
      continue;
    }
    if (!inClass && c === "(" && p[i + 1] === "?") {
      const rest = p.slice(i + 2);
      if (/^(=|!|<=|<!)/.test(rest)) return "uses a look-around ((?=, (?!, (?<=, (?<!), which RE2 does not support";
      const named = /^P?<([A-Za-z0-9_]+)>/.exec(rest);
      if (named) {
        js += `(?<${named[1]}>`;
        i += 1 + named[0].length;
        continue;
      }
      const flags = /^(-?[imsU]+|[imsU]+-[imsU]*)(\)|:)/.exec(rest);
      if (flags) {
        // (?i) and (?i:…): flags JavaScript writes differently; the group stays.
        js += flags[2] === ":" ? "(?:" : "";
        i += 1 + flags[0].length;
        continue;
      }
      if (!rest.startsWith(":")) return "has an unknown group (?… ; RE2 knows (?:…), (?P<name>…), (?<name>…) and flags such as (?i)";
    }
    if (!inClass && c === "{") {
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
      if (rep && (Number(rep[1]) > 1000 || Number(rep[3] ?? 0) > 1000)) return "repeats more than 1000 times, the most RE2 allows";
    }
    js += c;
  }
  try {
    new RegExp(js);
  } catch (err) {
    return `does not compile: ${(err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, "")}`;
  }
  return undefined;
}

// checkValue is the as-you-type check of one rule value for its operator.
export function checkValue(op: Operator, value: string): string | undefined {
  switch (valueKind(op)) {
    case "regex":
      return checkPattern(value);
    case "semver":
      return checkVersion(value);
    case "instant":
      return checkInstant(value);
    default:
      return undefined;
  }
}

const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, "0");

// offsetOf is a Date's local UTC offset as ±hh:mm.
function offsetOf(d: Date): string {
  const minutes = -d.getTimezoneOffset();
  return `${minutes < 0 ? "-" : "+"}${pad(minutes / 60)}:${pad(minutes % 60)}`;
}

// localToInstant turns a datetime-local value ("2026-03-01T09:30" or with
// seconds) into RFC 3339 with the browser's offset at that moment
// ("2026-03-01T09:30:00+01:00"); "" when the local clock never shows it.
export function localToInstant(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  if (!m) return "";
  const [, y = "", mo = "", da = "", h = "", mi = "", se = "00"] = m;
  const d = new Date(2000, 0, 1);
  d.setFullYear(+y, +mo - 1, +da);
  d.setHours(+h, +mi, +se, 0);
  // A day the calendar lacks rolls over, and so does a time skipped by a
  // daylight-saving change: neither is what the user picked.
  if (Number.isNaN(d.getTime()) || d.getDate() !== +da || d.getMonth() !== +mo - 1 || d.getHours() !== +h || d.getMinutes() !== +mi) return "";
  return `${y}-${mo}-${da}T${h}:${mi}:${se}${offsetOf(d)}`;
}

// instantToLocal shows an instant (any accepted form) as a datetime-local
// value in the browser's zone, to seconds; "" when it is no instant.
export function instantToLocal(text: string): string {
  const ms = instantMillis(text);
  if (ms === undefined) return "";
  const d = new Date(ms);
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
