// Pure helpers of the flag screens: the editor's form state and its
// conversion to and from the API's Flag / FlagInput / FlagPatch, variant
// weight sums, rule reordering, 422 field-path mapping and list summaries.
import { ApiError, type ErrorDetail, type Schemas } from "../../api/client";
import { checkValue, KEY_PATTERN } from "../../lib/targeting";

export type Flag = Schemas["Flag"];
export type FlagInput = Schemas["FlagInput"];
export type FlagPatch = Schemas["FlagPatch"];
export type TargetingRule = Schemas["TargetingRule"];
export type WeightedVariant = Schemas["WeightedVariant"];
export type Prerequisite = Schemas["Prerequisite"];
export type Operator = Schemas["Operator"];
export type FlagType = Schemas["FlagType"];
export type AnyValue = Schemas["AnyValue"];
export type ChangeRequest = Schemas["ChangeRequest"];
export type Condition = Schemas["Condition"];

export const FLAG_TYPES: FlagType[] = ["boolean", "string", "integer", "json"];

// ---- Form state -----------------------------------------------------------

// Values are edited as text and parsed by the flag's type on save.

// ConditionForm is one condition row: attribute, operator and its values,
// one per entry (blank entries are dropped on save).
export type ConditionForm = {
  id: string;
  attribute: string;
  operator: Operator;
  values: string[];
  extra?: Record<string, unknown>; // fields this editor does not know, kept as loaded
};

// RuleForm is one targeting rule (docs/reference/evaluation.md, Rules): an
// optional segment and condition rows, all of which must hold. When topLevel
// is set, the first row is the rule's top-level condition (its attribute,
// operator and values fields) and the others are its conditions; otherwise
// every row is an entry of conditions. So a rule comes back in the shape it
// was written in, and a new one-condition rule is written as the single
// top-level condition.
export type RuleForm = {
  id: string;
  kind: "condition" | "segment";
  segment_key: string;
  topLevel: boolean;
  conditions: ConditionForm[];
  rollout: string; // rule rollout percentage; "" = none (everyone who matches)
  serve: "value" | "split"; // one value (variant) or a weighted split (variants)
  variant: string; // "" = unset (falls back to the default value)
  split: VariantForm[];
  extra?: Record<string, unknown>; // fields this editor does not know, kept as loaded
};

const RULE_FIELDS = ["attribute", "operator", "values", "conditions", "segment_key", "variant", "rollout_percentage", "variants"];
const CONDITION_FIELDS = ["attribute", "operator", "values"];

// extraOf returns an object's fields outside known, or undefined when none.
function extraOf(o: object, known: string[]): Record<string, unknown> | undefined {
  const extra = Object.fromEntries(Object.entries(o).filter(([k]) => !known.includes(k)));
  return Object.keys(extra).length > 0 ? extra : undefined;
}
export type VariantForm = { id: string; value: string; weight: string };
export type PrereqForm = { id: string; flag_key: string; required_value: string }; // "" = "is on"

export type FlagForm = {
  key: string;
  description: string;
  flag_type: FlagType;
  is_enabled: boolean;
  default_value: string;
  disabled_value: string;
  rollout: number | null; // null = 100 percent, no limit set
  variants: VariantForm[];
  rules: RuleForm[];
  prerequisites: PrereqForm[];
  tags: string[];
  owner_email: string;
  client_side: boolean; // client keys (browsers, apps) may evaluate it
};

let seq = 0;
export function newId(prefix = "row"): string {
  seq += 1;
  return `${prefix}-${seq}`;
}

export function emptyCondition(): ConditionForm {
  return { id: newId("cond"), attribute: "", operator: "equals", values: [""] };
}
export function emptyRule(): RuleForm {
  return {
    id: newId("rule"),
    kind: "condition",
    segment_key: "",
    topLevel: true,
    conditions: [emptyCondition()],
    rollout: "",
    serve: "value",
    variant: "",
    split: [],
  };
}
export function emptySegmentRule(): RuleForm {
  return { ...emptyRule(), kind: "segment", topLevel: false, conditions: [] };
}
export function emptyVariant(): VariantForm {
  return { id: newId("variant"), value: "", weight: "" };
}
export function emptyPrereq(): PrereqForm {
  return { id: newId("prereq"), flag_key: "", required_value: "" };
}

export function emptyForm(): FlagForm {
  return {
    key: "",
    description: "",
    flag_type: "boolean",
    is_enabled: false,
    default_value: "",
    disabled_value: "",
    rollout: null,
    variants: [],
    rules: [],
    prerequisites: [],
    tags: [],
    owner_email: "",
    client_side: false,
  };
}

// formatValue renders a flag value for a text box ("" for unset).
export function formatValue(type: FlagType, v: AnyValue | undefined): string {
  if (v === undefined || v === null) return "";
  if (type === "json") return JSON.stringify(v);
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

// displayValue renders a value compactly for tables and summaries.
export function displayValue(v: AnyValue | undefined): string {
  if (v === undefined || v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  return JSON.stringify(v);
}

export type Parsed = { ok: true; value: AnyValue | undefined } | { ok: false; error: string };

// parseValue reads a text box by the flag's type; "" means unset (undefined).
export function parseValue(type: FlagType, text: string): Parsed {
  const t = text.trim();
  if (type === "string") return { ok: true, value: text === "" ? undefined : text };
  if (t === "") return { ok: true, value: undefined };
  switch (type) {
    case "boolean":
      if (t === "true") return { ok: true, value: true };
      if (t === "false") return { ok: true, value: false };
      return { ok: false, error: "must be true or false" };
    case "integer": {
      if (!/^-?\d+$/.test(t)) return { ok: false, error: "must be a whole number" };
      const n = Number(t);
      if (!Number.isSafeInteger(n)) return { ok: false, error: "is too large" };
      return { ok: true, value: n };
    }
    case "json":
      try {
        return { ok: true, value: JSON.parse(t) as AnyValue };
      } catch {
        return { ok: false, error: "is not valid JSON" };
      }
  }
  return { ok: false, error: "unknown type" };
}

export function flagToForm(f: Flag): FlagForm {
  const t = f.flag_type;
  return {
    key: f.key,
    description: f.description ?? "",
    flag_type: t,
    is_enabled: f.is_enabled,
    default_value: formatValue(t, f.default_value),
    disabled_value: formatValue(t, f.disabled_value),
    rollout: f.rollout_percentage,
    variants: f.variants.map((v) => ({ id: newId("variant"), value: formatValue(t, v.value), weight: String(v.weight) })),
    rules: f.rules.map((r) => ruleToForm(r, t)),
    prerequisites: f.prerequisites.map((p) => ({
      id: newId("prereq"),
      flag_key: p.flag_key,
      required_value: formatLoose(p.required_value),
    })),
    tags: f.tags,
    owner_email: f.owner_email ?? "",
    client_side: f.client_side ?? false,
  };
}

// ruleToForm loads a rule (of a flag of type t, or of a segment without t).
export function ruleToForm(r: TargetingRule, t?: FlagType): RuleForm {
  const hasTop = typeof r.attribute === "string" && r.attribute !== "";
  const rows: ConditionForm[] = (r.conditions ?? []).map((c) => ({
    id: newId("cond"),
    attribute: c.attribute,
    operator: c.operator,
    values: c.values.length > 0 ? [...c.values] : [""],
    extra: extraOf(c, CONDITION_FIELDS),
  }));
  if (hasTop) rows.unshift({ id: newId("cond"), attribute: r.attribute ?? "", operator: r.operator ?? "equals", values: r.values?.length ? [...r.values] : [""] });
  const extra: Record<string, unknown> = extraOf(r, RULE_FIELDS) ?? {};
  if (!hasTop) {
    // Without an attribute the server ignores an operator or values (segment
    // rules of old); keep them as they were rather than drop them.
    if (r.operator) extra.operator = r.operator;
    if (r.values && r.values.length > 0) extra.values = r.values;
  }
  const kind = r.segment_key ? "segment" : "condition";
  const split = (r.variants ?? []).map((v) => ({ id: newId("variant"), value: t ? formatValue(t, v.value) : formatLoose(v.value), weight: String(v.weight) }));
  return {
    id: newId("rule"),
    kind,
    segment_key: r.segment_key ?? "",
    topLevel: hasTop,
    conditions: rows,
    rollout: r.rollout_percentage === undefined || r.rollout_percentage === null ? "" : String(r.rollout_percentage),
    serve: split.length > 0 ? "split" : "value",
    variant: t ? formatValue(t, r.variant) : formatLoose(r.variant),
    split,
    extra: Object.keys(extra).length > 0 ? extra : undefined,
  };
}

// rowPath is the API field path of a rule's condition row j: the rule itself
// for its top-level condition, else its entry of conditions.
export function rowPath(rule: Pick<RuleForm, "topLevel">, field: string, j: number): string {
  if (rule.topLevel && j === 0) return field;
  return `${field}.conditions.${rule.topLevel ? j - 1 : j}`;
}

// conditionValues is a row's values as sent: blank entries dropped.
export function conditionValues(c: ConditionForm): string[] {
  return c.values.filter((v) => v !== "");
}

// conditionsOf writes a rule's condition rows in the rule's shape and
// collects client-side problems under the API's paths
// ("rules.1.conditions.0.values.2").
export function conditionsOf(
  r: RuleForm,
  field: string,
  errors: FieldErrors,
): Pick<TargetingRule, "attribute" | "operator" | "values" | "conditions"> {
  const out: Pick<TargetingRule, "attribute" | "operator" | "values" | "conditions"> = {};
  const conditions: Condition[] = [];
  r.conditions.forEach((c, j) => {
    const path = rowPath(r, field, j);
    const values = conditionValues(c);
    if (!c.attribute.trim()) errors[path + ".attribute"] = "is required";
    if (values.length === 0) errors[path + ".values"] = "needs at least one value";
    values.forEach((v, k) => {
      const why = checkValue(c.operator, v);
      if (why) errors[`${path}.values.${k}`] = why;
    });
    const cond = { ...c.extra, attribute: c.attribute.trim(), operator: c.operator, values };
    if (r.topLevel && j === 0) Object.assign(out, cond);
    else conditions.push(cond as Condition);
  });
  if (conditions.length > 0) out.conditions = conditions;
  if (r.kind === "condition" && r.conditions.length === 0) errors[field] = "needs at least one condition";
  return out;
}

// parseLoose reads a prerequisite's required value: JSON when it parses
// (true, 3, "x", {...}), otherwise the text as a string.
export function parseLoose(text: string): AnyValue | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  try {
    return JSON.parse(t) as AnyValue;
  } catch {
    return text;
  }
}

// splitValues reads a rule's values, one per line (blank lines dropped).
export function splitValues(text: string): string[] {
  return text.split(/\r?\n/).filter((v) => v !== "");
}

// formatLoose shows a prerequisite's required value: strings as they are
// unless they would read as another JSON value ("true" stays quoted).
export function formatLoose(v: AnyValue | undefined): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return parseLoose(v) === v ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

// parseRequired reads a required value by the prerequisite flag's type when
// that flag is known (a string flag takes the text as it is).
export function parseRequired(text: string, type?: FlagType): Parsed {
  if (text.trim() === "") return { ok: true, value: undefined };
  if (type === "string") {
    const loose = parseLoose(text);
    return { ok: true, value: typeof loose === "string" && text.trim().startsWith('"') ? loose : text };
  }
  if (type === "boolean" || type === "integer") return parseValue(type, text);
  return { ok: true, value: parseLoose(text) };
}

export type FieldErrors = Record<string, string>;

// formToInput builds the whole flag (create or replace) and collects the
// client-side problems under the API's field paths ("rules.1.values").
export function formToInput(
  form: FlagForm,
  flagTypes: Record<string, FlagType> = {},
): { input: FlagInput; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const t = form.flag_type;
  const value = (field: string, text: string): AnyValue | undefined => {
    const p = parseValue(t, text);
    if (!p.ok) {
      errors[field] = p.error;
      return undefined;
    }
    return p.value;
  };

  if (!KEY_PATTERN.test(form.key)) {
    errors.key = form.key === "" ? "is required" : "must be 1 to 100 ASCII letters, digits, underscores or hyphens";
  }
  const email = form.owner_email.trim();
  if (email && !/^[^\s@]+@[^\s@]+$/.test(email)) errors.owner_email = "must be an email address";

  const rules: TargetingRule[] = form.rules.map((r, i) => {
    const field = `rules.${i}`;
    const rule: TargetingRule = { ...r.extra };
    if (r.kind === "segment") {
      if (!r.segment_key) errors[field + ".segment_key"] = "choose a segment";
      rule.segment_key = r.segment_key;
    }
    Object.assign(rule, conditionsOf(r, field, errors));
    const rollout = r.rollout.trim();
    if (rollout !== "") {
      if (!/^\d+$/.test(rollout) || Number(rollout) > 100) errors[field + ".rollout_percentage"] = "must be a whole number from 0 to 100";
      else rule.rollout_percentage = Number(rollout);
    }
    if (t !== "boolean" && r.serve === "split") {
      rule.variants = r.split.map((v, k) => {
        const at = `${field}.variants.${k}`;
        const w = v.weight.trim();
        if (!/^\d+$/.test(w)) errors[at + ".weight"] = "must be a whole number, 0 or more";
        const val = value(at + ".value", v.value);
        if (val === undefined && !errors[at + ".value"]) errors[at + ".value"] = "is required";
        return { weight: /^\d+$/.test(w) ? Number(w) : 0, value: val ?? null };
      });
      if (r.split.length === 0) errors[field + ".variants"] = "add a variant, or serve one value";
      else if (r.split.every((v) => /^\d+$/.test(v.weight.trim())) && weightSummary(r.split).sum === 0) {
        errors[field + ".variants"] = "weights add up to 0: no variant would be served";
      }
    } else if (t !== "boolean") {
      const v = value(field + ".variant", r.variant);
      if (v !== undefined) rule.variant = v;
    }
    return rule;
  });

  const variants: WeightedVariant[] =
    t === "boolean"
      ? []
      : form.variants.map((v, i) => {
          const field = `variants.${i}`;
          const w = v.weight.trim();
          let weight = 0;
          if (!/^\d+$/.test(w)) errors[field + ".weight"] = "must be a whole number, 0 or more";
          else weight = Number(w);
          const val = value(field + ".value", v.value);
          if (val === undefined && !errors[field + ".value"]) errors[field + ".value"] = "is required";
          return { weight, value: val ?? null };
        });
  if (variants.length > 0 && !errors["variants"] && weightSummary(form.variants).sum === 0) {
    errors.variants = "weights add up to 0: no variant would be served";
  }

  const prerequisites: Prerequisite[] = form.prerequisites.map((p, i) => {
    if (!p.flag_key) errors[`prerequisites.${i}.flag_key`] = "choose a flag";
    else if (p.flag_key === form.key) errors[`prerequisites.${i}.flag_key`] = "a flag cannot be its own prerequisite";
    const parsed = parseRequired(p.required_value, flagTypes[p.flag_key]);
    if (!parsed.ok) errors[`prerequisites.${i}.required_value`] = parsed.error;
    const req = parsed.ok ? parsed.value : undefined;
    return req === undefined ? { flag_key: p.flag_key } : { flag_key: p.flag_key, required_value: req };
  });

  const input: FlagInput = {
    key: form.key,
    is_enabled: form.is_enabled,
    rollout_percentage: form.rollout,
    description: form.description === "" ? null : form.description,
    flag_type: t,
    default_value: value("default_value", form.default_value) ?? null,
    disabled_value: value("disabled_value", form.disabled_value) ?? null,
    rules,
    variants,
    prerequisites,
    tags: form.tags,
    owner_email: email === "" ? null : email,
    client_side: form.client_side,
  };
  return { input, errors };
}

const PATCH_FIELDS = [
  "is_enabled",
  "rollout_percentage",
  "description",
  "flag_type",
  "default_value",
  "disabled_value",
  "rules",
  "variants",
  "prerequisites",
  "tags",
  "owner_email",
  "client_side",
] as const;

// canon is a stable JSON text: object keys sorted, and (inside rules) empty
// parts dropped — the server answers a segment rule as {values: [], segment_key}.
function canon(v: unknown, dropEmpty = false): string {
  if (Array.isArray(v)) return `[${v.map((x) => canon(x, dropEmpty)).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => !dropEmpty || !(x === null || x === undefined || x === "" || (Array.isArray(x) && x.length === 0)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canon(x)}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

function same(field: string, a: unknown, b: unknown): boolean {
  if (field === "rules" && Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((r, i) => canon(r, true) === canon(b[i], true));
  }
  return canon(a) === canon(b);
}

// patchFrom is the merge patch turning `current` into `input`: only the
// changed fields (arrays are replaced whole, as RFC 7396 says), so a change
// request shows what the author actually changed.
export function patchFrom(current: Flag, input: FlagInput): FlagPatch {
  const patch: FlagPatch = {};
  const src = input as Record<string, unknown>;
  const cur = current as unknown as Record<string, unknown>;
  const out = patch as Record<string, unknown>;
  for (const f of PATCH_FIELDS) {
    if (f in src && !same(f, src[f], cur[f])) out[f] = src[f] === undefined ? null : src[f];
  }
  return patch;
}

// ---- Variants -------------------------------------------------------------

export type WeightSummary = {
  sum: number;
  shares: number[]; // percent of traffic per variant (relative weights normalised), 1 decimal
  valid: boolean;
  message: string;
};

// Weights are relative (docs/reference/evaluation.md, Variant selection:
// 6/3/1 behaves as 60/30/10); a sum of 0 serves no variant. Blank or invalid
// weights count as 0 and make it invalid.
export function weightSummary(variants: { weight: string | number }[]): WeightSummary {
  const ws = variants.map((v) => {
    const s = String(v.weight).trim();
    return /^\d+$/.test(s) ? Number(s) : NaN;
  });
  const bad = ws.some((w) => Number.isNaN(w));
  const nums = ws.map((w) => (Number.isNaN(w) ? 0 : w));
  const sum = nums.reduce((a, b) => a + b, 0);
  const shares = nums.map((w) => (sum > 0 ? Math.round((w / sum) * 1000) / 10 : 0));
  if (variants.length === 0) return { sum: 0, shares, valid: true, message: "No variants: the default value is served" };
  if (bad) return { sum, shares, valid: false, message: `sum ${sum} ✗ every weight must be a whole number ≥ 0` };
  if (sum === 0) return { sum, shares, valid: false, message: "sum 0 ✗ no variant would be served" };
  const pct = sum === 100 ? "sum 100% ✓" : `sum ${sum} ✓ (weights are relative: shares shown as percentages)`;
  return { sum, shares, valid: true, message: pct };
}

// ---- Ordering -------------------------------------------------------------

export function moveItem<T>(list: T[], from: number, to: number): T[] {
  if (from === to || from < 0 || from >= list.length || to < 0 || to >= list.length) return list;
  const next = list.slice();
  const removed = next.splice(from, 1);
  next.splice(to, 0, ...removed);
  return next;
}

// ---- 422 details ----------------------------------------------------------

// normalizePath turns "rules[1].values", "/rules/1/values" and
// "rules.1.values" into the one form "rules.1.values".
export function normalizePath(field: string): string {
  return field
    .replace(/^\/+/, "")
    .replace(/\//g, ".")
    .replace(/\[(\d+)\]/g, ".$1")
    .replace(/^body\./, "")
    .replace(/^\./, "");
}

export function detailsToErrors(details: ErrorDetail[]): FieldErrors {
  const out: FieldErrors = {};
  for (const d of details) {
    const k = normalizePath(d.field);
    out[k] = out[k] ? `${out[k]}; ${d.message}` : d.message;
  }
  return out;
}

export function apiFieldErrors(err: unknown): FieldErrors {
  return err instanceof ApiError && err.status === 422 ? detailsToErrors(err.details) : {};
}

// errorAt finds the message for a path or anything under it ("rules.1"
// matches "rules.1.values" when asked with nested=true).
export function errorAt(errors: FieldErrors, path: string, nested = false): string | undefined {
  if (errors[path]) return errors[path];
  if (!nested) return undefined;
  const under = Object.keys(errors).filter((k) => k.startsWith(path + "."));
  return under.length ? under.map((k) => `${k.slice(path.length + 1)}: ${errors[k]}`).join("; ") : undefined;
}

// ---- Summaries ------------------------------------------------------------

export type Glance = {
  serves: string; // what users get when the flag is off / outside rollout
  rules: number;
  segments: number;
  rollout: number; // 0-100
  variants: { value: string; share: number }[];
  prerequisites: number;
};

export function glance(f: Flag): Glance {
  const shares = weightSummary(f.variants.map((v) => ({ weight: v.weight }))).shares;
  return {
    serves: f.flag_type === "boolean" ? "false" : displayValue(f.disabled_value),
    rules: f.rules.length,
    segments: f.rules.filter((r) => r.segment_key).length,
    rollout: f.rollout_percentage ?? 100,
    variants: f.variants.map((v, i) => ({ value: displayValue(v.value), share: shares[i] ?? 0 })),
    prerequisites: f.prerequisites.length,
  };
}

// isChangeRequest tells a 202 body from a 200 Flag.
export function isChangeRequest(v: unknown): v is ChangeRequest {
  return typeof v === "object" && v !== null && "flag_key" in v && "patch" in v && "status" in v;
}

export function matchesSearch(f: Flag, q: string): boolean {
  const s = q.trim().toLowerCase();
  if (!s) return true;
  return (
    f.key.toLowerCase().includes(s) ||
    (f.description ?? "").toLowerCase().includes(s) ||
    (f.owner_email ?? "").toLowerCase().includes(s) ||
    f.tags.some((t) => t.toLowerCase().includes(s))
  );
}

export function allTags(flags: Flag[]): string[] {
  return [...new Set(flags.flatMap((f) => f.tags))].sort();
}

// defaultTarget picks the environment to compare the current one with: the
// default environment, or the first other one when the current is the default.
export function defaultTarget(envs: Schemas["EnvironmentSummary"][], current: string): string {
  const others = envs.filter((e) => e.id !== current);
  return (others.find((e) => e.is_default) ?? others[0])?.id ?? "";
}
