// Workspace users (workspace admins): list, create, edit name/role, deactivate/reactivate, delete.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldErrorOf, ApiError, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { HistoryLink } from "../../components/history";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Modal, Notice, PageHeader, RowAction, Time } from "../../components/ui";
import { keys, useMe } from "../../lib/session";
import "./admin.css";
import { ROLES } from "./shared";

type User = Schemas["User"];
export const usersKey = ["users"] as const;

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

// validateUser checks what the schema requires before the server is asked.
// When editing only the name is checked (email and password are not sent).
export function validateUser(
  input: { name: string; email: string; password: string },
  editing = false,
): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!input.name.trim()) errors.name = "Enter a name.";
  else if (input.name.length > 100) errors.name = "At most 100 characters.";
  if (editing) return errors;
  if (!EMAIL_RE.test(input.email.trim())) errors.email = "Enter a valid email address.";
  if (input.password.length < 8) errors.password = "At least 8 characters.";
  return errors;
}

export default function Users() {
  const api = useApi();
  const qc = useQueryClient();
  const me = useMe();
  const users = useQuery({ queryKey: usersKey, queryFn: () => unwrap(api.GET("/api/users")) });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<User | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const [toggling, setToggling] = useState<User | null>(null);
  const [status, setStatus] = useState("");

  const remove = useMutation({
    mutationFn: (u: User) => unwrap(api.DELETE("/api/users/{id}", { params: { path: { id: u.id } } })),
    onSuccess: (_d, u) => {
      setDeleting(null);
      setStatus(`Deleted ${u.email}.`);
      void qc.invalidateQueries({ queryKey: usersKey });
    },
  });

  // Deactivation (docs/reference/identity.md, Deactivation): the user keeps their
  // row and tokens, but every session ends and nothing of theirs is accepted
  // until they are reactivated.
  const setActive = useMutation({
    mutationFn: (u: User) =>
      unwrap(api.PATCH("/api/users/{id}", { params: { path: { id: u.id } }, body: { active: !u.active } })),
    onSuccess: (u) => {
      setToggling(null);
      setStatus(u.active ? `Reactivated ${u.email}.` : `Deactivated ${u.email}.`);
      void qc.invalidateQueries({ queryKey: usersKey });
    },
  });

  return (
    <div className="admin-page">
      <PageHeader
        title="Users"
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New user
          </Button>
        }
      >
        Everyone who can sign in to this workspace. Workspace admins see every project; others see the projects they are
        members of.
      </PageHeader>
      {status && <Notice kind="success">{status}</Notice>}
      {users.isPending ? (
        <Loading />
      ) : users.error ? (
        <ErrorBanner action="manage workspace users" error={users.error} />
      ) : users.data.length === 0 ? (
        <Empty title="No users yet" />
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Workspace role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.map((u) => (
                <tr key={u.id} className={u.active ? undefined : "user-deactivated"}>
                  <th scope="row">
                    {u.name}
                    {me.data?.id === u.id && <span className="muted"> (you)</span>}
                  </th>
                  <td>{u.email}</td>
                  <td>
                    <span className={`pill${u.role === "admin" ? " pill-warning" : ""}`}>{u.role}</span>
                  </td>
                  <td>
                    {u.active ? (
                      <span className="pill pill-success">active</span>
                    ) : (
                      <span className="pill pill-danger">deactivated</span>
                    )}
                    {u.sso_linked && (
                      <>
                        {" "}
                        <span className="pill" title="Linked to the organisation's identity provider">
                          SSO linked
                        </span>
                      </>
                    )}
                  </td>
                  <td>
                    <Time value={u.created_at} />
                  </td>
                  <td className="actions-cell">
                    <HistoryLink type="user" id={String(u.id)} of={u.email} />{" "}
                    <Button className="btn-small" aria-label={`Edit ${u.email}`} onClick={() => setEditing(u)}>
                      Edit
                    </Button>{" "}
                    {me.data?.id !== u.id && (
                      <>
                        <RowAction label={u.active ? "Deactivate" : "Reactivate"} of={u.email} start={() => { setActive.reset(); setToggling(u); }} />{" "}
                      </>
                    )}
                    <RowAction danger label="Delete" of={u.email} start={() => { remove.reset(); setDeleting(u); }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <UserForm
          onClose={() => setCreating(false)}
          onDone={(u) => {
            setCreating(false);
            setStatus(`Created ${u.email}.`);
          }}
        />
      )}
      {editing && (
        <UserForm
          user={editing}
          onClose={() => setEditing(null)}
          onDone={(u) => {
            setEditing(null);
            setStatus(`Saved ${u.email}.`);
            if (u.id === me.data?.id) void qc.invalidateQueries({ queryKey: keys.me });
          }}
        />
      )}
      {toggling && (
        <ConfirmDialog
          action="manage workspace users"
          title={`${toggling.active ? "Deactivate" : "Reactivate"} ${toggling.name}?`}
          confirmLabel={toggling.active ? "Deactivate user" : "Reactivate user"}
          busy={setActive.isPending}
          error={setActive.error}
          onConfirm={() => setActive.mutate(toggling)}
          onClose={() => setToggling(null)}
        >
          {toggling.active ? (
            <p>
              {toggling.email} is signed out everywhere at once and cannot sign in; their personal access tokens are refused
              and their open streams end. Their account, memberships and tokens are kept, so you can reactivate them later.
            </p>
          ) : (
            <p>
              {toggling.email} can sign in again, and their personal access tokens work again. Sessions ended by the
              deactivation stay ended.
            </p>
          )}
        </ConfirmDialog>
      )}
      {deleting && (
        <ConfirmDialog
          action="manage workspace users"
          title={`Delete ${deleting.name}?`}
          confirmLabel="Delete user"
          busy={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(deleting)}
          onClose={() => setDeleting(null)}
        >
          <p>
            {deleting.email} loses access at once: their sessions and personal access tokens are deleted. This cannot be
            undone.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

function UserForm({ user, onClose, onDone }: { user?: User; onClose: () => void; onDone: (u: User) => void }) {
  const api = useApi();
  const qc = useQueryClient();
  const [name, setName] = useState(user?.name ?? "");
  const [email, setEmail] = useState(user?.email ?? "");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Schemas["Role"]>(user?.role ?? "editor");
  const [local, setLocal] = useState<Record<string, string>>({});

  const save = useMutation({
    mutationFn: () =>
      user
        ? unwrap(api.PATCH("/api/users/{id}", { params: { path: { id: user.id } }, body: { name: name.trim(), role } }))
        : unwrap(api.POST("/api/users", { body: { name: name.trim(), email: email.trim(), password, role } })),
    onSuccess: (u) => {
      void qc.invalidateQueries({ queryKey: usersKey });
      onDone(u);
    },
  });

  const err = save.error;
  const fieldErr = (f: string) =>
    local[f] ??
    fieldErrorOf(err, f) ??
    (f === "email" && err instanceof ApiError && err.status === 409 ? err.message : undefined);
  // 409 (email in use) and field-level 422 details sit next to their fields; anything else is a banner.
  const inFields =
    err instanceof ApiError &&
    (err.status === 409 ||
      (err.details.length > 0 && err.details.every((d) => /^(name|email|password|role)/.test(d.field))));
  const bannerErr = inFields ? null : err;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errors = validateUser({ name, email, password }, Boolean(user));
    setLocal(errors);
    if (Object.keys(errors).length === 0) save.mutate();
  };

  return (
    <Modal title={user ? `Edit ${user.name}` : "New user"} onClose={onClose}>
      <form onSubmit={submit} noValidate className="form-stack">
        <Field label="Name" error={fieldErr("name")}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />}
        </Field>
        {user ? (
          <p className="muted">Email: {user.email}</p>
        ) : (
          <>
            <Field label="Email" error={fieldErr("email")}>
              {(p) => <input {...p} type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />}
            </Field>
            <Field label="Password" hint="At least 8 characters. Share it privately; they can sign in right away." error={fieldErr("password")}>
              {(p) => (
                <input {...p} type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
              )}
            </Field>
          </>
        )}
        <Field
          label="Role"
          hint={
            role === "admin"
              ? "Workspace admins see and manage every project and every user."
              : "Sees only the projects they are added to; their role in each project decides what they can change."
          }
          error={fieldErr("role")}
        >
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as Schemas["Role"])}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        {user && <p className="muted">Passwords cannot be changed here; the API has no password reset.</p>}
        <ErrorBanner action="manage workspace users" error={bannerErr} />
        <div className="row">
          <Button type="submit" variant="primary" busy={save.isPending}>
            {user ? "Save changes" : "Create user"}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Modal>
  );
}
