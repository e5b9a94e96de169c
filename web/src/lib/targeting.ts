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
