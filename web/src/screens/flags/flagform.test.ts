import { ApiError } from "../../api/client";
import {
  apiFieldErrors,
  defaultTarget,
  emptyForm,
  errorAt,
  flagToForm,
  formToInput,
  glance,
  moveItem,
  normalizePath,
  parseValue,
  patchFrom,
  weightSummary,
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
  form.rules = [{ id: "r", kind: "condition", attribute: "", operator: "equals", values: "", segment_key: "", variant: "1.5" }];
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

test("rule fields the form does not edit (conditions, rule rollout, split) are saved as loaded", () => {
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
