// Project members: list, add (pick a workspace user, or by user id), change role, remove.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { HistoryLink } from "../../components/history";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Notice, PageHeader, RowAction } from "../../components/ui";
import { isAdmin, keys, useScope } from "../../lib/session";
import "./admin.css";
import { ROLE_HINT, ROLES } from "./shared";
import { usersKey } from "./Users";

type Member = Schemas["Member"];
type Role = Schemas["Role"];

export default function Members() {
  const api = useApi();
  const qc = useQueryClient();
  const { projectId, project, me } = useScope();
  const membersKey = ["members", projectId] as const;
  const members = useQuery({
    queryKey: membersKey,
    queryFn: () => unwrap(api.GET("/api/projects/{project_id}/members", { params: { path: { project_id: projectId } } })),
    enabled: Boolean(projectId),
  });
  // Only workspace admins may list users; others add members by user id.
  const canListUsers = isAdmin(me);
  const users = useQuery({
    queryKey: usersKey,
    queryFn: () => unwrap(api.GET("/api/users")),
    enabled: canListUsers,
  });
  const [removing, setRemoving] = useState<Member | null>(null);
  const [status, setStatus] = useState("");

  const refresh = () => {
    void qc.invalidateQueries({ queryKey: membersKey });
    void qc.invalidateQueries({ queryKey: keys.projects }); // member_count
  };

  const changeRole = useMutation({
    mutationFn: ({ m, role }: { m: Member; role: Role }) =>
      unwrap(
        api.PATCH("/api/projects/{project_id}/members/{user_id}", {
          params: { path: { project_id: projectId, user_id: m.user_id } },
          body: { role },
        }),
      ),
    onSuccess: (m) => {
      setStatus(`${m.name} is now ${m.role}.`);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (m: Member) =>
      unwrap(
        api.DELETE("/api/projects/{project_id}/members/{user_id}", {
          params: { path: { project_id: projectId, user_id: m.user_id } },
        }),
      ),
    onSuccess: (_d, m) => {
      setRemoving(null);
      setStatus(`Removed ${m.name} from ${project?.name ?? "the project"}. Their account is kept.`);
      refresh();
    },
  });

  const memberIds = new Set((members.data ?? []).map((m) => m.user_id));
  const candidates = (users.data ?? []).filter((u) => !memberIds.has(u.id));
  const admins = (members.data ?? []).filter((m) => m.role === "admin").length;

  return (
    <div className="admin-page">
      <PageHeader title="Members">
        Who can use {project?.name ?? "this project"} and with which role. Workspace admins have access without being
        members.
      </PageHeader>

      <AddMember
        projectId={projectId}
        candidates={canListUsers && !users.error ? candidates : null}
        onAdded={(m) => {
          setStatus(`Added ${m.name} as ${m.role}.`);
          refresh();
        }}
      />

      {status && <Notice kind="success">{status}</Notice>}
      <ErrorBanner action="manage the members of this project" error={changeRole.error} />
      {members.isPending && projectId ? (
        <Loading />
      ) : members.error ? (
        <ErrorBanner action="manage the members of this project" error={members.error} />
      ) : (members.data ?? []).length === 0 ? (
        <Empty title="No members yet">Add people above.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {(members.data ?? []).map((m) => (
                <tr key={m.user_id}>
                  <th scope="row">
                    {m.name}
                    {me?.id === m.user_id && <span className="muted"> (you)</span>}
                  </th>
                  <td>{m.email}</td>
                  <td>
                    <select
                      aria-label={`Role of ${m.name}`}
                      value={m.role}
                      disabled={changeRole.isPending}
                      onChange={(e) => {
                        changeRole.reset();
                        changeRole.mutate({ m, role: e.target.value as Role });
                      }}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td className="actions-cell">
                    <HistoryLink type="member" id={String(m.user_id)} within={{ project_id: projectId }} projectId={projectId} of={`${m.name} in this project`} />{" "}
                    <RowAction danger label="Remove" of={m.name} start={() => { remove.reset(); setRemoving(m); }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {removing && (
        <ConfirmDialog
          action="manage the members of this project"
          title={`Remove ${removing.name}?`}
          confirmLabel="Remove member"
          busy={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(removing)}
          onClose={() => setRemoving(null)}
        >
          <p>
            {removing.email} loses access to {project?.name ?? "this project"} on their next request. Their account is kept.
          </p>
          {removing.role === "admin" && admins === 1 && (
            <p className="banner banner-warning">This is the project&apos;s only admin member.</p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}

function AddMember({
  projectId,
  candidates,
  onAdded,
}: {
  projectId: string;
  candidates: Schemas["User"][] | null;
  onAdded: (m: Member) => void;
}) {
  const api = useApi();
  const [userChoice, setUserChoice] = useState("");
  const [role, setRole] = useState<Role>("editor");
  const [localError, setLocalError] = useState<string>();
  const add = useMutation({
    mutationFn: (userId: number) =>
      unwrap(
        api.POST("/api/projects/{project_id}/members", {
          params: { path: { project_id: projectId } },
          body: { user_id: userId, role },
        }),
      ),
    onSuccess: (m) => {
      setUserChoice("");
      onAdded(m);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const id = Number(userChoice);
    const err = !userChoice ? "Choose a user." : !Number.isInteger(id) || id < 1 ? "Enter a user id (a whole number)." : undefined;
    setLocalError(err);
    if (!err) add.mutate(id);
  };
  const userError = localError ?? fieldErrorOf(add.error, "user_id");
  return (
    <section className="card admin-section" aria-labelledby="add-member">
      <h2 id="add-member">Add a member</h2>
      <form className="admin-form" onSubmit={submit} noValidate>
        {candidates ? (
          <Field label="User" error={userError}>
            {(p) => (
              <select {...p} value={userChoice} onChange={(e) => setUserChoice(e.target.value)}>
                <option value="">{candidates.length === 0 ? "Every user is already a member" : "Choose a user…"}</option>
                {candidates.map((u) => (
                  <option key={u.id} value={String(u.id)}>
                    {u.name} ({u.email})
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : (
          <Field label="User id" hint="Ask a workspace admin for the person's user id." error={userError}>
            {(p) => (
              <input {...p} inputMode="numeric" value={userChoice} onChange={(e) => setUserChoice(e.target.value.trim())} />
            )}
          </Field>
        )}
        <Field label="Project role" error={fieldErrorOf(add.error, "role")}>
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r} — {ROLE_HINT[r]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Button type="submit" variant="primary" busy={add.isPending}>
          Add member
        </Button>
      </form>
      {add.error && !fieldErrorOf(add.error, "user_id") && (
        <div style={{ marginTop: 12 }}>
          <ErrorBanner action="manage the members of this project" error={add.error} />
        </div>
      )}
    </section>
  );
}
