// SCIM provisioning (workspace admins): the base URL to give the identity
// provider, and its tokens: list, create (shown once), revoke (docs/scim.md).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import {
  Button,
  ConfirmDialog,
  CopyButton,
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

type ScimToken = Schemas["ScimToken"];
export const scimTokensKey = ["scim-tokens"] as const;

export default function Scim() {
  const api = useApi();
  const qc = useQueryClient();
  const tokens = useQuery({ queryKey: scimTokensKey, queryFn: () => unwrap(api.GET("/api/workspace/scim-tokens")) });
  const [name, setName] = useState("");
  const [nameError, setNameError] = useState<string>();
  const [revoking, setRevoking] = useState<ScimToken | null>(null);
  const [status, setStatus] = useState("");
  const baseUrl = window.location.origin + "/scim/v2";

  const create = useMutation({
    mutationFn: () => unwrap(api.POST("/api/workspace/scim-tokens", { body: { name: name.trim() } })),
    onSuccess: () => {
      setName("");
      setStatus("");
      void qc.invalidateQueries({ queryKey: scimTokensKey });
    },
  });
  const revoke = useMutation({
    mutationFn: (t: ScimToken) =>
      unwrap(api.DELETE("/api/workspace/scim-tokens/{id}", { params: { path: { id: t.id } } })),
    onSuccess: (_d, t) => {
      setRevoking(null);
      setStatus(`Revoked “${t.name}”. The identity provider's requests with it now fail.`);
      void qc.invalidateQueries({ queryKey: scimTokensKey });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const err = !name.trim()
      ? "Name the token after the identity provider that will use it."
      : name.trim().length > 100
        ? "At most 100 characters."
        : undefined;
    setNameError(err);
    if (!err) create.mutate();
  };

  return (
    <div className="admin-page">
      <PageHeader title="SCIM provisioning">
        Your identity provider creates, updates, deactivates and removes users here as people join, change and leave
        (SCIM 2.0). Sign-in itself is set up under <Link to="/admin/sso">Single sign-on</Link>.
      </PageHeader>

      <section className="card admin-section" aria-labelledby="scim-base-url">
        <h2 id="scim-base-url">Base URL</h2>
        <p>Give the identity provider this address as the SCIM base URL (Okta: connector base URL; Entra ID: tenant URL):</p>
        <div className="secret-row">
          <code data-testid="scim-base-url">{baseUrl}</code>
          <CopyButton label="Copy the SCIM base URL" text={baseUrl} />
        </div>
        <p className="field-hint">It must be reachable from the identity provider.</p>
      </section>

      <section className="card admin-section" aria-labelledby="new-scim-token">
        <h2 id="new-scim-token">New token</h2>
        <p className="muted">
          The provider sends it as a bearer token. It works only for SCIM requests, never to sign in or call the rest of the
          API.
        </p>
        <form className="admin-form" onSubmit={submit} noValidate>
          <Field label="Token name" error={nameError ?? fieldErrorOf(create.error, "name")}>
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. Okta" />}
          </Field>
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create token
          </Button>
        </form>
        {create.error && <ErrorBanner action="manage SCIM tokens" error={create.error} shownFields={["name"]} />}
        {create.data && (
          <div className="created-key">
            <SecretOnce label={`SCIM token “${create.data.name}”`} secret={create.data.token} />
          </div>
        )}
      </section>

      {status && <Notice kind="success">{status}</Notice>}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.error ? (
        <ErrorBanner action="manage SCIM tokens" error={tokens.error} />
      ) : tokens.data.length === 0 ? (
        <Empty title="No SCIM tokens">Create one above and give it to the identity provider with the base URL.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Last used</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.data.map((t) => (
                <tr key={t.id}>
                  <th scope="row">{t.name}</th>
                  <td>
                    <code>{t.prefix}…</code>
                  </td>
                  <td>{t.last_used_at ? <Time value={t.last_used_at} /> : <span className="muted">Never used</span>}</td>
                  <td>
                    <Time value={t.created_at} />
                  </td>
                  <td className="actions-cell">
                    <RowAction danger label="Revoke" of={t.name} start={() => { revoke.reset(); setRevoking(t); }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ConfirmDialog
          action="manage SCIM tokens"
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke token"
          busy={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(revoking)}
          onClose={() => setRevoking(null)}
        >
          <p>
            The identity provider's next request with this token fails, so users are no longer provisioned or deprovisioned
            until you give it a new one. Users and their accounts are not changed.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
