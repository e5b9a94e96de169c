// The project's SDK keys: list, create for an environment (shown once), revoke.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, EnvBadge, ErrorBanner, Field, Loading, Notice, PageHeader, SecretOnce, Time } from "../../components/ui";
import { useScope } from "../../lib/session";
import "./admin.css";

type SdkKey = Schemas["SdkKey"];

export default function SdkKeys() {
  const api = useApi();
  const qc = useQueryClient();
  const { projectId, envId, project } = useScope();
  const keysKey = ["sdk-keys", projectId] as const;
  const list = useQuery({
    queryKey: keysKey,
    queryFn: () => unwrap(api.GET("/api/projects/{project_id}/keys", { params: { path: { project_id: projectId } } })),
    enabled: Boolean(projectId),
  });
  const envs = project?.environments ?? [];
  const [name, setName] = useState("");
  const [envChoice, setEnvChoice] = useState("");
  const environmentId = envChoice || envId || envs[0]?.id || "";
  const [nameError, setNameError] = useState<string>();
  const [revoking, setRevoking] = useState<SdkKey | null>(null);
  const [status, setStatus] = useState("");

  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/projects/{project_id}/keys", {
          params: { path: { project_id: projectId } },
          body: { name: name.trim(), environment_id: environmentId },
        }),
      ),
    onSuccess: () => {
      setName("");
      setStatus("");
      void qc.invalidateQueries({ queryKey: keysKey });
    },
  });
  const revoke = useMutation({
    mutationFn: (k: SdkKey) =>
      unwrap(api.DELETE("/api/projects/{project_id}/keys/{id}", { params: { path: { project_id: projectId, id: k.id } } })),
    onSuccess: (_d, k) => {
      setRevoking(null);
      setStatus(`Revoked “${k.name}”. SDKs using it are disconnected on their next request.`);
      void qc.invalidateQueries({ queryKey: keysKey });
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const err = !name.trim() ? "Name the key after the service that will use it." : name.length > 100 ? "At most 100 characters." : undefined;
    setNameError(err);
    if (!err && environmentId) create.mutate();
  };

  const colorOf = (id: string) => envs.find((e) => e.id === id)?.color ?? "#6366f1";
  // Keys of the same environment sit together, in the project's environment order.
  const order = (id: string) => {
    const i = envs.findIndex((e) => e.id === id);
    return i < 0 ? envs.length : i;
  };
  const rows = [...(list.data ?? [])].sort((a, b) => order(a.environment_id) - order(b.environment_id));
  const perEnv = new Map<string, number>();
  for (const k of rows) perEnv.set(k.environment_id, (perEnv.get(k.environment_id) ?? 0) + 1);

  return (
    <div className="admin-page">
      <PageHeader title="SDK keys">
        Server-side SDKs authenticate with a key; each key is bound to one environment of {project?.name ?? "this project"}.
      </PageHeader>

      <section className="card admin-section" aria-labelledby="new-key">
        <h2 id="new-key">New SDK key</h2>
        <form className="admin-form" onSubmit={submit} noValidate>
          <Field label="Key name" error={nameError ?? fieldErrorOf(create.error, "name")}>
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. checkout-service" />}
          </Field>
          <Field label="Environment" error={fieldErrorOf(create.error, "environment_id")}>
            {(p) => (
              <select {...p} value={environmentId} onChange={(e) => setEnvChoice(e.target.value)}>
                {envs.map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" busy={create.isPending} disabled={!environmentId}>
            Create key
          </Button>
        </form>
        {create.error && <ErrorBanner action="manage SDK keys" error={create.error} />}
        {create.data && (
          <div style={{ marginTop: 12 }}>
            <SecretOnce label={`SDK key “${create.data.name}” for ${create.data.environment_name}`} secret={create.data.key} />
          </div>
        )}
      </section>

      {status && <Notice kind="success">{status}</Notice>}
      {list.isPending && projectId ? (
        <Loading />
      ) : list.error ? (
        <ErrorBanner action="manage SDK keys" error={list.error} />
      ) : rows.length === 0 ? (
        <Empty title="No SDK keys">Create one above for each service that evaluates flags.</Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Environment</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((k) => (
                <tr key={k.id}>
                  <th scope="row">{k.name}</th>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>
                    <EnvBadge name={k.environment_name} color={colorOf(k.environment_id)} />
                  </td>
                  <td>
                    <Time value={k.created_at} />
                  </td>
                  <td className="actions-cell">
                    <Button
                      className="btn-small"
                      variant="danger"
                      aria-label={`Revoke ${k.name}`}
                      onClick={() => {
                        revoke.reset();
                        setRevoking(k);
                      }}
                    >
                      Revoke
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ConfirmDialog
          action="manage SDK keys"
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke key"
          busy={revoke.isPending}
          error={revoke.error}
          onConfirm={() => revoke.mutate(revoking)}
          onClose={() => setRevoking(null)}
        >
          <p>
            Services using <code>{revoking.prefix}…</code> ({revoking.environment_name}) lose access immediately, on every
            server instance.
          </p>
          {rows.length === 1 ? (
            <p className="banner banner-warning">
              This is the project&apos;s only SDK key; the server refuses to revoke it. Create a replacement first.
            </p>
          ) : (
            perEnv.get(revoking.environment_id) === 1 && (
              <p className="banner banner-warning">
                This is the only key of {revoking.environment_name}: no service will be able to read its flags until you
                create another.
              </p>
            )
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
