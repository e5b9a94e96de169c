import { ApiError } from "../../api/client";
import {
  apiFieldErrors,
  defaultTarget,
  emptyCondition,
  emptyForm,
  emptyRule,
  emptySegmentRule,
  errorAt,
  flagToForm,
  formToInput,
  glance,
  moveItem,
  normalizePath,
  parseValue,
  patchFrom,
  ruleToForm,
  rowPath,
  weightSummary,
  type FlagForm,
  type RuleForm,
} from "./flagform";
import { flag } from "../../test/fixtures";

test("weights are relative: shares are normalised and a zero sum is invalid", () => {
  const s = weightSummary([{ weight: "6" }, { weight: "3" }, { weight: "1" }]);
  expect(s.sum).toBe(10);
  expect(s.shares).toEqual([60, 30, 10]);
  expect(s.valid).toBe(true);
  expect(weightSummary([{ weight: 50 }, { weight: 50 }]).message).toBe("sum 100% ✓");
  expect(weightSummary([{ weight: "0" }, { weight: "0" }]).valid).toBe(false);
  expect(weightSummary([{ weight: "-1" }, { weight: "5" }]).valid).toBe(false);
  expect(weightSummary([{ weight: "" }]).valid).toBe(false);
});

test("moveItem reorders and ignores moves past either end", () => {
  expect(moveItem(["a", "b", "c"], 2, 0)).toEqual(["c", "a", "b"]);
  expect(moveItem(["a", "b", "c"], 0, 1)).toEqual(["b", "a", "c"]);
  const same = ["a", "b"];
  expect(moveItem(same, 0, -1)).toBe(same);
  expect(moveItem(same, 1, 2)).toBe(same);
});

test("field paths in every notation map to one form", () => {
  expect(normalizePath("rules[1].values")).toBe("rules.1.values");
  expect(normalizePath("/rules/1/values")).toBe("rules.1.values");
  expect(normalizePath("rules.1.values")).toBe("rules.1.values");
  const errs = apiFieldErrors(
    new ApiError(422, { error: "invalid", details: [{ field: "rules[1].values", message: "needs at least one value" }] }),
  );
  expect(errorAt(errs, "rules.1.values")).toBe("needs at least one value");
  expect(errorAt(errs, "rules.1")).toBeUndefined();
  expect(errorAt(errs, "rules.1", true)).toBe("values: needs at least one value");
  expect(apiFieldErrors(new ApiError(409, { error: "conflict" }))).toEqual({});
});

test("values parse by the flag type", () => {
  expect(parseValue("integer", "42")).toEqual({ ok: true, value: 42 });
  expect(parseValue("integer", "4.2").ok).toBe(false);
  expect(parseValue("json", '{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  expect(parseValue("json", "{a:1}").ok).toBe(false);
  expect(parseValue("string", " x ")).toEqual({ ok: true, value: " x " });
  expect(parseValue("string", "")).toEqual({ ok: true, value: undefined });
});

test("a string flag round-trips through the form unchanged", () => {
  const f = flag({
    flag_type: "string",
    default_value: "blue",
    disabled_value: "grey",
    rollout_percentage: 40,
    variants: [
      { weight: 70, value: "blue" },
      { weight: 30, value: "green" },
    ],
    rules: [
      { attribute: "country", operator: "equals", values: ["NL", "BE"], variant: "green" },
      { segment_key: "beta", variant: "blue" },
    ],
    prerequisites: [{ flag_key: "auth", required_value: true }, { flag_key: "billing" }],
    tags: ["web"],
    owner_email: "a@example.com",
  });
  const { input, errors } = formToInput(flagToForm(f));
  expect(errors).toEqual({});
  expect(patchFrom(f, input)).toEqual({});
  expect(input.rules).toEqual([
    { attribute: "country", operator: "equals", values: ["NL", "BE"], variant: "green" },
    { segment_key: "beta", variant: "blue" },
  ]);
});

test("patchFrom sends only the changed fields", () => {
  const f = flag();
  const form = flagToForm(f);
  form.rollout = 25;
  form.tags = ["web", "q4"];
  form.description = "";
  const { input } = formToInput(form);
  expect(patchFrom(f, input)).toEqual({ rollout_percentage: 25, tags: ["web", "q4"], description: null });
});

test("client validation names the API's field paths", () => {
  const form = { ...emptyForm(), key: "bad key", flag_type: "integer" as const, default_value: "x", disabled_value: "" };
  form.rules = [{ ...emptyRule(), variant: "1.5" }];
  form.variants = [{ id: "v", value: "3", weight: "0" }];
  const { errors } = formToInput(form);
  expect(Object.keys(errors).sort()).toEqual(
    ["default_value", "key", "rules.0.attribute", "rules.0.values", "rules.0.variant", "variants"].sort(),
  );
});

test("glance summarises rollout, rules and variant split", () => {
  const g = glance(
    flag({
      flag_type: "string",
      disabled_value: "off",
      rollout_percentage: 30,
      rules: [{ segment_key: "beta" }, { attribute: "a", operator: "equals", values: ["x"] }],
      variants: [
        { weight: 1, value: "a" },
        { weight: 3, value: "b" },
      ],
      prerequisites: [{ flag_key: "p" }],
    }),
  );
  expect(g).toEqual({
    serves: '"off"',
    rules: 2,
    segments: 1,
    rollout: 30,
    variants: [
      { value: '"a"', share: 25 },
      { value: '"b"', share: 75 },
    ],
    prerequisites: 1,
  });
  expect(glance(flag()).rollout).toBe(100);
});

test("the diff defaults to the default environment, or the next one from it", () => {
  const envs = [
    { id: "prod", name: "Production", slug: "prod", color: "#f00", is_default: true, require_approval: false },
    { id: "stg", name: "Staging", slug: "stg", color: "#0f0", is_default: false, require_approval: false },
    { id: "dev", name: "Dev", slug: "dev", color: "#00f", is_default: false, require_approval: false },
  ];
  expect(defaultTarget(envs, "dev")).toBe("prod");
  expect(defaultTarget(envs, "prod")).toBe("stg");
  expect(defaultTarget(envs.slice(0, 1), "prod")).toBe("");
});

test("the server's shapes round-trip to an empty patch (segment rule with empty values, null boolean values)", () => {
  const f = flag({
    default_value: null,
    disabled_value: null,
    rules: [{ values: [], segment_key: "beta" }, { values: ["x"], operator: "equals", attribute: "a" }],
  });
  const { input, errors } = formToInput(flagToForm(f));
  expect(errors).toEqual({});
  expect(patchFrom(f, input)).toEqual({});
});

test("a prerequisite's required value follows that flag's type", () => {
  const form = { ...emptyForm(), key: "k" };
  form.prerequisites = [
    { id: "1", flag_key: "s", required_value: "true" },
    { id: "2", flag_key: "b", required_value: "true" },
    { id: "3", flag_key: "n", required_value: "3" },
    { id: "4", flag_key: "n", required_value: "x" },
    { id: "5", flag_key: "unknown", required_value: "" },
  ];
  const { input, errors } = formToInput(form, { s: "string", b: "boolean", n: "integer" });
  expect(input.prerequisites).toEqual([
    { flag_key: "s", required_value: "true" },
    { flag_key: "b", required_value: true },
    { flag_key: "n", required_value: 3 },
    { flag_key: "n" },
    { flag_key: "unknown" },
  ]);
  expect(errors).toEqual({ "prerequisites.3.required_value": "must be a whole number" });
  // a string "true" shows quoted so it stays a string; "beta" shows as it is
  const f = flagToForm(flag({ prerequisites: [{ flag_key: "s", required_value: "true" }, { flag_key: "s", required_value: "beta" }] }));
  expect(f.prerequisites.map((p) => p.required_value)).toEqual(['"true"', "beta"]);
  expect(formToInput(f, { s: "string" }).input.prerequisites).toEqual([
    { flag_key: "s", required_value: "true" },
    { flag_key: "s", required_value: "beta" },
  ]);
});

test("rules with conditions, a rule rollout and a split load and save unchanged", () => {
  const f = flag({
    key: "pricing",
    flag_type: "string",
    default_value: "a",
    disabled_value: "off",
    rules: [
      {
        attribute: "country",
        operator: "equals",
        values: ["DE"],
        conditions: [{ attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0"] }],
        rollout_percentage: 30,
      },
      { conditions: [{ attribute: "plan", operator: "not_in", values: ["free"] }], variants: [{ value: "b", weight: 1 }, { value: "c", weight: 1 }] },
    ],
  });
  const { input, errors } = formToInput(flagToForm(f));
  expect(errors).toEqual({});
  expect(patchFrom(f, input)).toEqual({});
  expect(input.rules).toEqual([
    {
      attribute: "country",
      operator: "equals",
      values: ["DE"],
      conditions: [{ attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0"] }],
      rollout_percentage: 30,
    },
    { conditions: [{ attribute: "plan", operator: "not_in", values: ["free"] }], variants: [{ value: "b", weight: 1 }, { value: "c", weight: 1 }] },
  ]);
});

// stringFlagForm is an empty string flag's form with the given rules.
function stringFlagForm(rules: RuleForm[]): FlagForm {
  return { ...emptyForm(), key: "checkout", flag_type: "string", default_value: "classic", rules };
}

test("a new rule of one condition is written as the single top-level condition; more conditions go into conditions", () => {
  const one: RuleForm = { ...emptyRule(), conditions: [{ ...emptyCondition(), attribute: "country", values: ["DE", "", "AT"] }], variant: "de" };
  const two: RuleForm = {
    ...one,
    conditions: [
      ...one.conditions,
      { ...emptyCondition(), attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0"] },
      { ...emptyCondition(), attribute: "plan", operator: "not_in", values: ["free", "trial"] },
    ],
    rollout: "30",
  };
  const { input, errors } = formToInput(stringFlagForm([one, two]));
  expect(errors).toEqual({});
  expect(input.rules).toEqual([
    { attribute: "country", operator: "equals", values: ["DE", "AT"], variant: "de" },
    {
      attribute: "country",
      operator: "equals",
      values: ["DE", "AT"],
      conditions: [
        { attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0"] },
        { attribute: "plan", operator: "not_in", values: ["free", "trial"] },
      ],
      rollout_percentage: 30,
      variant: "de",
    },
  ]);
});

test("a segment rule with conditions, and a conditions-only rule, keep their shape", () => {
  const seg: RuleForm = {
    ...emptySegmentRule(),
    segment_key: "beta",
    conditions: [{ ...emptyCondition(), attribute: "country", values: ["NL"] }],
  };
  const { input } = formToInput(stringFlagForm([seg, emptySegmentRule()]));
  expect(input.rules?.[0]).toEqual({ segment_key: "beta", conditions: [{ attribute: "country", operator: "equals", values: ["NL"] }] });
  expect(input.rules?.[1]).toEqual({ segment_key: "" });

  const loaded = ruleToForm({ values: [], conditions: [{ attribute: "a", operator: "equals", values: ["1"] }, { attribute: "b", operator: "equals", values: ["2"] }] }, "string");
  expect(loaded.topLevel).toBe(false);
  expect(rowPath(loaded, "rules.3", 0)).toBe("rules.3.conditions.0");
  expect(formToInput(stringFlagForm([loaded])).input.rules?.[0]).toEqual({
    conditions: [
      { attribute: "a", operator: "equals", values: ["1"] },
      { attribute: "b", operator: "equals", values: ["2"] },
    ],
  });
  const top = ruleToForm({ attribute: "a", operator: "equals", values: ["1"], conditions: [{ attribute: "b", operator: "equals", values: ["2"] }] });
  expect([rowPath(top, "rules.0", 0), rowPath(top, "rules.0", 1)]).toEqual(["rules.0", "rules.0.conditions.0"]);
});

test("a split serializes as the rule's variants, typed by the flag, without variant", () => {
  const form: FlagForm = {
    ...stringFlagForm([]),
    flag_type: "integer",
    default_value: "1",
    rules: [
      {
        ...emptyRule(),
        conditions: [{ ...emptyCondition(), attribute: "plan", values: ["pro"] }],
        serve: "split",
        variant: "7", // left over from "one value": not sent with a split
        split: [
          { id: "a", value: "2", weight: "50" },
          { id: "b", value: "3", weight: "0" },
        ],
      },
    ],
  };
  const { input, errors } = formToInput(form);
  expect(errors).toEqual({});
  expect(input.rules?.[0]).toEqual({
    attribute: "plan",
    operator: "equals",
    values: ["pro"],
    variants: [
      { value: 2, weight: 50 },
      { value: 3, weight: 0 },
    ],
  });
  // On a boolean flag a rule serves true: no variant, no split.
  expect(formToInput({ ...form, flag_type: "boolean", default_value: "" }).input.rules?.[0]).toEqual({ attribute: "plan", operator: "equals", values: ["pro"] });
});

test("rule problems are named by the API's paths: values by index, rollout, split", () => {
  const form = stringFlagForm([
    {
      ...emptyRule(),
      conditions: [
        { ...emptyCondition(), attribute: "country", values: ["DE"] },
        { ...emptyCondition(), attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0", "", "2.4"] },
        { ...emptyCondition(), attribute: "email", operator: "regex", values: ["(abc"] },
        { ...emptyCondition(), attribute: "signed_up", operator: "after", values: ["2026-03-01"] },
        { ...emptyCondition(), attribute: "", values: [""] },
      ],
      rollout: "101",
      serve: "split",
      split: [
        { id: "a", value: "", weight: "x" },
        { id: "b", value: "b", weight: "0" },
      ],
    },
    { ...emptyRule(), conditions: [] },
    { ...emptyRule(), serve: "split", conditions: [{ ...emptyCondition(), attribute: "a", values: ["1"] }], split: [{ id: "z", value: "z", weight: "0" }] },
  ]);
  const { errors } = formToInput(form);
  expect(Object.keys(errors).sort()).toEqual(
    [
      "rules.0.conditions.0.values.1", // "2.4": the blank line is not sent, so it is value 1
      "rules.0.conditions.1.values.0",
      "rules.0.conditions.2.values.0",
      "rules.0.conditions.3.attribute",
      "rules.0.conditions.3.values",
      "rules.0.rollout_percentage",
      "rules.0.variants.0.value",
      "rules.0.variants.0.weight",
      "rules.1",
      "rules.2.variants",
    ].sort(),
  );
  expect(errors["rules.2.variants"]).toMatch(/add up to 0/);
});

test("fields of a rule or condition the form does not know round-trip unchanged", () => {
  const rule = {
    attribute: "country",
    operator: "equals" as const,
    values: ["DE"],
    conditions: [{ attribute: "plan", operator: "equals" as const, values: ["pro"], case_insensitive: true }],
    description: "from a newer server",
  };
  const f = flag({ flag_type: "string", default_value: "a", disabled_value: "off", rules: [rule as never] });
  const { input, errors } = formToInput(flagToForm(f));
  expect(errors).toEqual({});
  expect(input.rules?.[0]).toEqual(rule);
  expect(patchFrom(f, input)).toEqual({});
});

test("a loaded instant, version or pattern is sent back exactly as written", () => {
  const rules = [
    { attribute: "signed_up_at", operator: "after" as const, values: ["2026-02-28T23:30:00-01:00", "1772323200001"] },
    { attribute: "app_version", operator: "semver_less_than" as const, values: ["v3.0.0-rc.1+b7"] },
    { attribute: "email", operator: "regex" as const, values: ["^[^@]+@(acme|globex)\\.com$"] },
  ];
  const f = flag({ rules });
  const { input, errors } = formToInput(flagToForm(f));
  expect(errors).toEqual({});
  expect(input.rules).toEqual(rules);
  expect(patchFrom(f, input)).toEqual({});
});
