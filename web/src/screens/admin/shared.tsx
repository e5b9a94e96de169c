// Pieces shared by the admin and segment screens: permission-aware error
// banners, a confirm dialog for destructive actions, and role options.
import { useState, type ReactNode } from "react";
import { ApiError, type Schemas } from "../../api/client";
import { Button, ErrorBanner, Field, Modal } from "../../components/ui";

export const ROLES: Schemas["Role"][] = ["admin", "editor", "viewer"];

export const ROLE_HINT: Record<Schemas["Role"], string> = {
  admin: "manages members, environments and keys",
  editor: "changes flags and segments",
  viewer: "read-only",
};

// permissionAware rewrites a 403 so it reads as a permission problem.
export function permissionAware(error: unknown): unknown {
  if (error instanceof ApiError && error.status === 403) {
    return new Error(`You do not have permission to do this (${error.message}).`);
  }
  return error;
}

export function ApiErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  return <ErrorBanner error={permissionAware(error)} />;
}

// fieldErrors maps a 422's details (or a 409 naming one field) to fields.
export function fieldErrorOf(error: unknown, field: string): string | undefined {
  return error instanceof ApiError ? error.fieldError(field) : undefined;
}

// ConfirmDialog asks before a destructive action; with requireText the user
// must type that text (e.g. a project's name) to enable the action.
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  busy,
  error,
  requireText,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  busy?: boolean;
  error?: unknown;
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
        <ApiErrorBanner error={error} />
        <div className="row">
          <Button variant="danger" busy={busy} disabled={blocked} onClick={onConfirm}>
            {confirmLabel}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </div>
    </Modal>
  );
}
