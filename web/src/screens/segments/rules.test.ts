import { emptyCondition, emptyRule, ruleToForm, type FieldErrors } from "../flags/flagform";
import { ruleSummary, segmentRuleOf } from "./Segments";

const conditions = [{ attribute: "plan", operator: "not_in" as const, values: ["free"] }];

test("a segment rule's conditions round-trip; a conditions-only rule writes no top-level condition", () => {
  const errors: FieldErrors = {};
  expect(segmentRuleOf(ruleToForm({ values: [], conditions }), 0, errors)).toEqual({ conditions });
  const withTop = { attribute: "country", operator: "equals" as const, values: ["DE", "AT"], conditions, variant: "blue" };
  expect(segmentRuleOf(ruleToForm(withTop), 0, errors)).toEqual(withTop);
  expect(errors).toEqual({});
});

test("a new segment rule of one condition is written as the single top-level condition; values are checked by operator", () => {
  const errors: FieldErrors = {};
  const rule = { ...emptyRule(), conditions: [{ ...emptyCondition(), attribute: "app_version", operator: "semver_equals" as const, values: ["2.4"] }] };
  expect(segmentRuleOf(rule, 1, errors)).toEqual({ attribute: "app_version", operator: "semver_equals", values: ["2.4"] });
  expect(Object.keys(errors)).toEqual(["rules.1.values.0"]);
  // A loose value: JSON when it parses, else the text.
  expect(segmentRuleOf({ ...rule, variant: "3" }, 0, {}).variant).toBe(3);
  expect(segmentRuleOf({ ...rule, variant: "blue" }, 0, {}).variant).toBe("blue");
});

test("ruleSummary reads every condition of a rule", () => {
  expect(ruleSummary({ attribute: "country", operator: "equals", values: ["DE"], conditions })).toBe("country equals DE and plan is none of free");
  expect(ruleSummary({ values: [], conditions })).toBe("plan is none of free");
});
