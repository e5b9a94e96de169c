// Side-by-side comparison of two JSON objects, field by field: used by the
// audit log (before/after) and the cross-environment flag diff.
import type { ReactNode } from "react";

function pretty(v: unknown): string {
  return v === undefined ? "—" : JSON.stringify(v, null, 2);
}

export function changedKeys(before: Record<string, unknown> | null, after: Record<string, unknown> | null, ignore: string[] = []): string[] {
  const all = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  return [...all]
    .filter((k) => !ignore.includes(k))
    .filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k]))
    .sort();
}

export function SideBySide({
  leftTitle,
  rightTitle,
  left,
  right,
  ignore = [],
  onlyChanged = false,
}: {
  leftTitle: ReactNode;
  rightTitle: ReactNode;
  left: Record<string, unknown> | null;
  right: Record<string, unknown> | null;
  ignore?: string[];
  onlyChanged?: boolean;
}) {
  const changed = new Set(changedKeys(left, right, ignore));
  const keys = [...new Set([...Object.keys(left ?? {}), ...Object.keys(right ?? {})])]
    .filter((k) => !ignore.includes(k))
    .filter((k) => !onlyChanged || changed.has(k))
    .sort();
  return (
    <table className="diff">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">{leftTitle}</th>
          <th scope="col">{rightTitle}</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr key={k} className={changed.has(k) ? "diff-changed" : undefined}>
            <th scope="row">
              {k}
              {changed.has(k) && <span className="sr-only"> (changed)</span>}
            </th>
            <td>
              <pre className={changed.has(k) ? "diff-old" : undefined}>{left ? pretty(left[k]) : "—"}</pre>
            </td>
            <td>
              <pre className={changed.has(k) ? "diff-new" : undefined}>{right ? pretty(right[k]) : "—"}</pre>
            </td>
          </tr>
        ))}
        {keys.length === 0 && (
          <tr>
            <td colSpan={3} className="muted">
              No differences.
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
