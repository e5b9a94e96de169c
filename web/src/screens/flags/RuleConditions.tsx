// The condition rows of a targeting rule (docs/reference/evaluation.md,
// Conditions), shared by the flag editor and the segment editor: attribute, operator and values per row,
// all rows ANDed, with input help by operator — versions and RE2 patterns
// checked as you type, a date-time picker for before/after — and the
// server's 422 details next to the value they name.
import { useId, useState, type ReactNode } from "react";
import { Button, Field } from "../../components/ui";
import { OPERATORS, checkValue, instantToLocal, isNegated, localToInstant, valueKind } from "../../lib/targeting";
import "./rules.css";
import { emptyCondition, rowPath, type ConditionForm, type FieldErrors, type Operator, type RuleForm } from "./flagform";

type Rows = Pick<RuleForm, "topLevel" | "conditions">;

// valueProblems lists, for a row's values, the as-you-type problems and the
// server's messages for single values ("rules.1.values.2"), by line.
export function valueProblems(c: ConditionForm, path: string, errors: FieldErrors): string[] {
  const out: string[] = [];
  let k = 0; // index among the values sent (blank entries are dropped)
  c.values.forEach((v, line) => {
    if (v === "") return;
    const why = errors[`${path}.values.${k}`] ?? checkValue(c.operator, v);
    if (why) out.push(`${c.values.length > 1 ? `Line ${line + 1}: ` : ""}“${v}” ${why}`);
    k += 1;
  });
  return out;
}

const HINTS: Record<ReturnType<typeof valueKind>, string> = {
  text: "One per line; any one matching counts.",
  number: "Numbers, one per line; any one matching counts.",
  regex: "RE2 patterns, one per line, checked as you type. A pattern matches anywhere in the text; anchor it with ^…$.",
  semver: "Semantic versions (2.4.0, v2.4.0-rc.1), one per line, checked as you type.",
  instant: "",
};

function zoneLabel(): string {
  const minutes = -new Date().getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? "−" : "+"}${String(Math.trunc(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

export function ConditionRows({
  rule,
  field,
  errors,
  label,
  onChange,
  empty,
  topLevelWhenEmpty = true,
}: {
  rule: Rows;
  field: string; // the rule's API path, "rules.1"
  errors: FieldErrors;
  label: string; // prefix of every accessible name, "Rule 2"
  onChange: (patch: Rows) => void;
  empty?: ReactNode; // shown when there is no row
  topLevelWhenEmpty?: boolean;
}) {
  const rows = rule.conditions;
  const setRow = (j: number, patch: Partial<ConditionForm>) =>
    onChange({ topLevel: rule.topLevel, conditions: rows.map((c, i) => (i === j ? { ...c, ...patch } : c)) });
  const remove = (j: number) => {
    const conditions = rows.filter((_, i) => i !== j);
    // Removing the last row of a rule written as a single top-level condition
    // leaves a rule whose next row, if any, takes the top-level place.
    onChange({ topLevel: rule.topLevel && conditions.length > 0, conditions });
  };
  // A first row becomes the top-level condition where the rule has nothing
  // else to test (the single top-level condition); beside a segment it goes
  // into conditions, as docs/reference/evaluation.md, Segment expansion,
  // writes such rules.
  const add = () =>
    onChange({ topLevel: rule.topLevel || (rows.length === 0 && topLevelWhenEmpty), conditions: [...rows, emptyCondition()] });
  return (
    <div className="conditions">
      {rows.length === 0 && empty}
      {rows.map((c, j) => (
        <ConditionRow
          key={c.id}
          c={c}
          first={j === 0}
          path={rowPath(rule, field, j)}
          errors={errors}
          label={`${label} condition ${j + 1}`}
          onChange={(patch) => setRow(j, patch)}
          onRemove={() => remove(j)}
        />
      ))}
      <Button className="btn-small" onClick={add}>
        Add condition<span className="sr-only"> to {label.toLowerCase()}</span>
      </Button>
    </div>
  );
}

function ConditionRow({
  c,
  first,
  path,
  errors,
  label,
  onChange,
  onRemove,
}: {
  c: ConditionForm;
  first: boolean;
  path: string;
  errors: FieldErrors;
  label: string;
  onChange: (patch: Partial<ConditionForm>) => void;
  onRemove: () => void;
}) {
  const kind = valueKind(c.operator);
  const problems = valueProblems(c, path, errors);
  const valuesErr = [errors[`${path}.values`], ...problems].filter(Boolean).join(" ") || undefined;
  const sr = <span className="sr-only">{label} </span>;
  return (
    <div className="condition-row" role="group" aria-label={label}>
      <span className="condition-join" aria-hidden="true">
        {first ? "If" : "and"}
      </span>
      <Field label={<>{sr}Attribute</>} error={errors[`${path}.attribute`]}>
        {(p) => (
          <input
            {...p}
            type="text"
            placeholder="e.g. country"
            autoComplete="off"
            spellCheck={false}
            value={c.attribute}
            onChange={(e) => onChange({ attribute: e.target.value })}
          />
        )}
      </Field>
      <Field label={<>{sr}Operator</>} error={errors[`${path}.operator`]}>
        {(p) => (
          <select {...p} value={c.operator} onChange={(e) => onChange({ operator: e.target.value as Operator })}>
            {OPERATORS.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {kind === "instant" ? (
        <InstantValues c={c} label={label} error={valuesErr} onChange={(values) => onChange({ values })} />
      ) : (
        <Field
          label={<>{sr}Values</>}
          hint={isNegated(c.operator) ? "One per line; the condition holds when none of them matches." : HINTS[kind]}
          error={valuesErr}
        >
          {(p) => (
            <textarea
              {...p}
              className={kind === "text" || kind === "number" ? undefined : "mono"}
              rows={Math.min(Math.max(c.values.length, 2), 6)}
              spellCheck={false}
              placeholder={kind === "semver" ? "2.4.0" : kind === "regex" ? "^[^@]+@acme\\.com$" : undefined}
              value={c.values.join("\n")}
              onChange={(e) => onChange({ values: e.target.value.split(/\r?\n/) })}
            />
          )}
        </Field>
      )}
      <Button variant="ghost" className="btn-small condition-remove" onClick={onRemove}>
        Remove<span className="sr-only"> {label.toLowerCase()}</span>
      </Button>
    </div>
  );
}

// InstantValues edits before/after values: per value a date-time picker in
// the browser's time zone, and the exact text sent (RFC 3339 with the
// offset, or whatever was loaded: another offset, epoch milliseconds), which
// may also be typed and is checked as you type.
function InstantValues({
  c,
  label,
  error,
  onChange,
}: {
  c: ConditionForm;
  label: string;
  error?: string;
  onChange: (values: string[]) => void;
}) {
  const id = useId();
  const zone = zoneLabel();
  // A picker that is half filled in reports ""; keep its text until it is whole.
  const [drafts, setDrafts] = useState<Record<number, string>>({});
  const set = (k: number, v: string) => onChange(c.values.map((x, i) => (i === k ? v : x)));
  return (
    <fieldset className={`field instant-values${error ? " field-invalid" : ""}`} aria-describedby={`${id}-hint${error ? ` ${id}-err` : ""}`}>
      <legend>
        <span className="sr-only">{label} </span>Dates
      </legend>
      {c.values.map((v, k) => {
        const n = c.values.length > 1 ? ` ${k + 1}` : "";
        return (
          <div className="instant-row" key={k}>
            <label>
              <span className="sr-only">
                {label} date{n}, {zone}
              </span>
              <input
                type="datetime-local"
                step={1}
                value={drafts[k] ?? instantToLocal(v)}
                aria-invalid={error ? true : undefined}
                onChange={(e) => {
                  const local = e.target.value;
                  const sent = localToInstant(local);
                  setDrafts((d) => ({ ...d, [k]: local }));
                  if (sent || local === "") set(k, sent);
                }}
                onBlur={() => setDrafts((d) => Object.fromEntries(Object.entries(d).filter(([i]) => Number(i) !== k)))}
              />
            </label>
            <label className="instant-sent">
              <span className="muted">
                sent as<span className="sr-only"> ({label} value{n})</span>
              </span>
              <input
                type="text"
                className="mono"
                spellCheck={false}
                placeholder="2026-03-01T00:00:00Z"
                value={v}
                aria-invalid={error ? true : undefined}
                onChange={(e) => {
                  setDrafts((d) => Object.fromEntries(Object.entries(d).filter(([i]) => Number(i) !== k)));
                  set(k, e.target.value);
                }}
              />
            </label>
            {c.values.length > 1 && (
              <Button variant="ghost" className="btn-small" onClick={() => onChange(c.values.filter((_, i) => i !== k))}>
                Remove<span className="sr-only"> {label.toLowerCase()} date{n}</span>
              </Button>
            )}
          </div>
        );
      })}
      <Button className="btn-small" onClick={() => onChange([...c.values, ""])}>
        Add date<span className="sr-only"> to {label.toLowerCase()}</span>
      </Button>
      <div className="field-hint" id={`${id}-hint`}>
        Picked in your time zone ({zone}) and sent as RFC 3339 with that offset; you may also type an RFC 3339 date-time or
        epoch milliseconds. Any one date counts.
      </div>
      {error && (
        <div className="field-error" id={`${id}-err`} role="alert">
          {error}
        </div>
      )}
    </fieldset>
  );
}
