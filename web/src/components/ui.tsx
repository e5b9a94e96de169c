// Small building blocks shared by every screen. Styling lives in styles.css.
import {
  useEffect,
  useId,
  useRef,
  useState,
  type ButtonHTMLAttributes,
  type ReactElement,
  type ReactNode,
} from "react";
import { ApiError, errorMessage, isForbidden, isUnder } from "../api/client";

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: "primary" | "secondary" | "danger" | "ghost";
  busy?: boolean;
};

export function Button({ variant = "secondary", busy, disabled, children, className, ...rest }: ButtonProps) {
  return (
    <button
      type="button"
      {...rest}
      className={`btn btn-${variant}${className ? " " + className : ""}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
    >
      {children}
    </button>
  );
}

// RowAction is a table row's small button, named for the row it acts on
// ("Revoke ci-token") so that a screen reader's list of buttons tells the rows
// apart. A danger action opens the row's confirmation; start clears the
// previous attempt's error first.
export function RowAction({ label, of, danger, start }: { label: string; of: string; danger?: boolean; start: () => void }) {
  return (
    <Button className="btn-small" variant={danger ? "danger" : "secondary"} aria-label={`${label} ${of}`} onClick={start}>
      {label}
    </Button>
  );
}

// Field labels one control and shows its hint and error, wired for screen readers.
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  children: (props: { id: string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ReactElement;
}) {
  const id = useId();
  const hintId = hint ? id + "-hint" : undefined;
  const errId = error ? id + "-err" : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(" ") || undefined;
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-describedby": describedBy, "aria-invalid": error ? true : undefined })}
      {hint && (
        <div className="field-hint" id={hintId}>
          {hint}
        </div>
      )}
      {error && (
        <div className="field-error" id={errId} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

// ErrorBanner is the one error banner of every screen (the screens used to
// have four of their own). It shows an API error's message and its 422 field
// details. With `action`, a 403 reads as a permission problem plus the
// server's reason. Details of `shownFields` are left to the form, which shows
// them next to their inputs; when that is all of them the banner points there.
export function ErrorBanner({ error, action, shownFields = [] }: { error: unknown; action?: string; shownFields?: string[] }) {
  if (!error) return null;
  if (action && isForbidden(error)) {
    return (
      <div className="banner banner-error" role="alert">
        <strong>You do not have permission to {action}.</strong> <span>{error.message}</span>
      </div>
    );
  }
  const all = error instanceof ApiError ? error.details : [];
  const details = all.filter((d) => !shownFields.some((f) => isUnder(d.field, f)));
  if (all.length > 0 && details.length === 0) {
    return (
      <div className="banner banner-error" role="alert">
        Check the fields marked above.
      </div>
    );
  }
  return (
    <div className="banner banner-error" role="alert">
      <strong>{errorMessage(error)}</strong>
      {details.length > 0 && (
        <ul>
          {details.map((d, i) => (
            <li key={i}>
              <code>{d.field}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Notice({ kind = "info", children }: { kind?: "info" | "success" | "warning"; children: ReactNode }) {
  return (
    <div className={`banner banner-${kind}`} role="status">
      {children}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function PageHeader({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {children && <div className="page-sub">{children}</div>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

// Toggle is a switch: a button with role="switch" so it is keyboard- and reader-friendly.
export function Toggle({
  checked,
  onChange,
  label,
  disabled,
  describedBy,
}: {
  checked: boolean;
  onChange: (next: boolean) => void;
  label: string;
  disabled?: boolean;
  describedBy?: string;
}) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={checked}
      aria-label={label}
      aria-describedby={describedBy}
      className={`switch${checked ? " on" : ""}`}
      disabled={disabled}
      onClick={() => onChange(!checked)}
    >
      <span className="switch-knob" />
    </button>
  );
}

// Modal is a labelled dialog that closes on Escape and returns focus to the opener.
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const titleId = useId();
  const ref = useRef<HTMLDivElement>(null);
  // A ref, so a parent passing a new closure each render does not re-run the
  // effect (which would move focus back to the first field).
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>("input, select, textarea, button");
    first?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") close.current();
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      opener?.focus?.();
    };
  }, []);
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby={titleId} ref={ref}>
        <div className="modal-head">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="btn btn-ghost" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}

// ConfirmDialog asks before a destructive action and shows that action's
// error (a 403 worded with `action`); with requireText the user must type that
// text (e.g. a project's name) to enable it. Shared by every screen.
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  cancelLabel = "Cancel",
  variant = "danger",
  busy,
  error,
  action,
  requireText,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: ReactNode;
  cancelLabel?: string;
  variant?: "danger" | "primary";
  busy?: boolean;
  error?: unknown;
  action?: string;
  requireText?: string;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const [typed, setTyped] = useState("");
  const blocked = requireText !== undefined && typed !== requireText;
  return (
    <Modal title={title} onClose={onClose}>
      <div className="stack">
        <div>{children}</div>
        {requireText !== undefined && (
          <Field label={`Type “${requireText}” to confirm`}>
            {(p) => <input {...p} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />}
          </Field>
        )}
        <ErrorBanner error={error} action={action} />
        <div className="row">
          <Button variant={variant} busy={busy} disabled={blocked} onClick={onConfirm}>
            {confirmLabel}
          </Button>
          <Button onClick={onClose}>{cancelLabel}</Button>
        </div>
      </div>
    </Modal>
  );
}

// CopyButton copies text to the clipboard and says so. `label` names what
// it copies for screen readers when a page has more than one.
export function CopyButton({ text, label, className }: { text: string; label?: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      className={className}
      aria-label={label}
      onClick={async () => {
        await navigator.clipboard?.writeText(text);
        setCopied(true);
      }}
    >
      {copied ? "Copied" : "Copy"}
    </Button>
  );
}

// SecretOnce shows a secret the server returns only once, with a copy button.
export function SecretOnce({ label, secret }: { label: string; secret: string }) {
  return (
    <div className="secret-once" role="status">
      <p>
        <strong>{label}</strong> — copy it now: it will not be shown again.
      </p>
      <div className="secret-row">
        <code data-testid="secret">{secret}</code>
        <CopyButton text={secret} />
      </div>
    </div>
  );
}

export function EnvBadge({ name, color }: { name: string; color: string }) {
  return (
    <span className="env-badge">
      <span className="env-dot" style={{ background: color }} aria-hidden="true" />
      {name}
    </span>
  );
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

// Time renders a timestamp as "3 minutes ago" with the exact time on hover.
export function Time({ value }: { value?: string | null }) {
  if (!value) return <span className="muted">—</span>;
  const d = new Date(value);
  const seconds = Math.round((d.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60
      ? relative.format(seconds, "second")
      : abs < 3600
        ? relative.format(Math.round(seconds / 60), "minute")
        : abs < 86400
          ? relative.format(Math.round(seconds / 3600), "hour")
          : relative.format(Math.round(seconds / 86400), "day");
  return (
    <time dateTime={value} title={d.toLocaleString()}>
      {text}
    </time>
  );
}
