// The signed-in user's personal access tokens: list, create (shown once), revoke.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import {
  Button,
  ConfirmDialog,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  Notice,
  PageHeader,
  RowAction,
  SecretOnce,
  Time,
} from "../../components/ui";
import "./admin.css";

type Token = Schemas["Token"];
const tokensKey = ["tokens"] as const;

export const EXPIRY_CHOICES: { label: string; days: number | null }[] = [
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
  { label: "Never", days: null },
];

const SCOPE_LABEL: Record<Schemas["TokenScope"], string> = {
  read_only: "Read only",
  read_write: "Read & write",
};

export default function Tokens() {
  const api = useApi();
  const qc = useQueryClient();
  const tokens = useQuery({ queryKey: tokensKey, queryFn: () => unwrap(api.GET("/api/tokens")) });
  const [name, setName] = useState("");
  const [scope, setScope] = useState<Schemas["TokenScope"]>("read_only");
  const [expiry, setExpiry] = useState("90");
  const [nameError, setNameError] = useState<string>();
  const [revoking, setRevoking] = useState<Token | null>(null);
  const [status, setStatus] = useState("");

  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/tokens", {
          body: { name: name.trim(), scope, ...(expiry === "never" ? {} : { expires_in_days: Number(expiry) }) },
        }),
      ),
    onSuccess: () => {
      setName("");
      setStatus("");
      void qc.invalidateQueries({ queryKey: tokensKey });
    },
  });
  const revoke = useMutation({
    mutationFn: (t: Token) => unwrap(api.DELETE("/api/tokens/{id}", { params: { path: { id: t.id } } })),
    onSuccess: (_d, t) => {
      setRevoking(null);
      setStatus(`Revoked “${t.name}”. Requests using it now fail.`);
      void qc.invalidateQueries({ queryKey: tokensKey });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const err = !name.trim() ? "Name the token after where it will be used." : name.length > 100 ? "At most 100 characters." : undefined;
    setNameError(err);
    if (!err) create.mutate();
  };

  const now = Date.now();
  return (
    <div className="admin-page">
      <PageHeader title="Personal access tokens">
        Tokens act as you from scripts and CI (<code>Authorization: Bearer pat_…</code>), capped by their scope.
      </PageHeader>

      <section className="card admin-section" aria-labelledby="new-token">
        <h2 id="new-token">New token</h2>
        <form className="admin-form" onSubmit={submit} noValidate>
          <Field label="Token name" error={nameError ?? fieldErrorOf(create.error, "name")}>
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. ci-deploy" />}
          </Field>
          <Field label="Scope" error={fieldErrorOf(create.error, "scope")}>
            {(p) => (
              <select {...p} value={scope} onChange={(e) => setScope(e.target.value as Schemas["TokenScope"])}>
                <option value="read_only">Read only</option>
                <option value="read_write">Read &amp; write</option>
              </select>
            )}
          </Field>
          <Field label="Expires in" error={fieldErrorOf(create.error, "expires_in_days")}>
            {(p) => (
              <select {...p} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
                {EXPIRY_CHOICES.map((c) => (
                  <option key={c.label} value={c.days === null ? "never" : String(c.days)}>
                    {c.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create token
          </Button>
        </form>
        {create.error && <ErrorBanner action="manage access tokens" error={create.error} />}
        {create.data && (
          <div style={{ marginTop: 12 }}>
            <SecretOnce label={`Token “${create.data.name}”`} secret={create.data.token} />
          </div>
        )}
      </section>

      {status && <Notice kind="success">{status}</Notice>}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.error ? (
        <ErrorBanner action="manage access tokens" error={tokens.error} />
      ) : tokens.data.length === 0 ? (
        <Empty title="No tokens">Create one above to call the API from scripts.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scope</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((t) => {
                const expired = t.expires_at !== null && new Date(t.expires_at).getTime() <= now;
                return (
                  <tr key={t.id}>
                    <th scope="row">{t.name}</th>
                    <td>
                      <code>{t.prefix}…</code>
                    </td>
                    <td>
                      <span className={`pill${t.scope === "read_write" ? " pill-warning" : ""}`}>{SCOPE_LABEL[t.scope]}</span>
                    </td>
                    <td>
                      {t.expires_at === null ? (
                        <span className="muted">Never</span>
                      ) : expired ? (
                        <span className="pill pill-danger">Expired</span>
                      ) : (
                        <Time value={t.expires_at} />
                      )}
                    </td>
                    <td>{t.last_used_at ? <Time value={t.last_used_at} /> : <span className="muted">Never used</span>}</td>
                    <td>
                      <Time value={t.created_at} />
                    </td>
                    <td className="actions-cell">
                      <RowAction danger label="Revoke" of={t.name} start={() => { revoke.reset(); setRevoking(t); }} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ConfirmDialog
          action="manage access tokens"
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke token"
          busy={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(revoking)}
          onClose={() => setRevoking(null)}
        >
          <p>Anything using this token stops working immediately.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
