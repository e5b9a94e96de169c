// The project's SDK keys: list, create for an environment (shown once, with
// start-up code for its kind), revoke. Two kinds: server keys (sk_live_…) stay
// on servers; client keys (pk_live_…) are published in browsers and apps and
// see only client-side flags (docs/reference/identity.md, Client keys).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { Link } from "react-router";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import {
  Button,
  ConfirmDialog,
  Empty,
  EnvBadge,
  ErrorBanner,
  Field,
  Loading,
  Notice,
  PageHeader,
  RowAction,
  SecretOnce,
  Time,
} from "../../components/ui";
import { HistoryLink } from "../../components/history";
import { Snippets } from "../../components/snippets";
import { envPath, useScope } from "../../lib/session";
import { snippetsFor, type SdkKind } from "./snippets";
import "./admin.css";

type SdkKey = Schemas["SdkKey"];

const KINDS: { kind: SdkKind; label: string; prefix: string; where: string; hint: string }[] = [
  {
    kind: "server",
    label: "Server key",
    prefix: "sk_live_",
    where: "servers only",
    hint: "For back-end services (the Go SDK, OpenFeature in Node, Java, Python…). Keep it secret: it reads every flag, rule and segment of its environment, so it must never be in a web page or a mobile app.",
  },
  {
    kind: "client",
    label: "Client key",
    prefix: "pk_live_",
    where: "browsers & apps",
    hint: "For browsers and mobile apps: safe to publish. It only evaluates the flags marked Client-side (through OFREP) and reports impressions and goal events.",
  },
];
const kindInfo = (k: SdkKind) => KINDS.find((x) => x.kind === k) ?? KINDS[0]!;

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
  const [kind, setKind] = useState<SdkKind>("server");
  const kindName = useId();
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
          body: { name: name.trim(), environment_id: environmentId, kind },
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
  // Only server keys count for "the last key" (a client key can always go).
  const serverKeys = rows.filter((k) => (k.kind ?? "server") === "server");
  const perEnv = new Map<string, number>();
  for (const k of serverKeys) perEnv.set(k.environment_id, (perEnv.get(k.environment_id) ?? 0) + 1);
  const chosenEnv = envs.find((e) => e.id === environmentId);
  const clientFlagsLink = envPath(projectId, environmentId, "flags?client_side=1");
  const created = create.data;
  const createdKind: SdkKind = created?.kind ?? "server";

  return (
    <div className="admin-page">
      <PageHeader title="SDK keys">
        Each key is bound to one environment of {project?.name ?? "this project"}. A <strong>server key</strong>{" "}
        (<code>sk_live_…</code>) stays on your servers; a <strong>client key</strong> (<code>pk_live_…</code>) goes in a
        browser or mobile app.
      </PageHeader>

      <div className="banner banner-info">
        <strong>A browser sees no flag until you mark it Client-side.</strong> Flag names are often secrets (an unannounced
        product, a customer&apos;s name), so every flag starts server-only: a client key evaluates only the flags whose{" "}
        <em>Client-side</em> switch is on, and any other flag answers as if it did not exist.{" "}
        <Link to={clientFlagsLink}>Client-side flags of {chosenEnv?.name ?? "this environment"}</Link> ·{" "}
        <a href="/api/docs">OFREP routes in the API reference</a>
      </div>

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
          <fieldset className="kind-choice">
            <legend>Kind</legend>
            {KINDS.map((k) => (
              <label key={k.kind} className={`kind-option${kind === k.kind ? " selected" : ""}`}>
                <input
                  type="radio"
                  name={kindName}
                  value={k.kind}
                  checked={kind === k.kind}
                  onChange={() => setKind(k.kind)}
                  aria-describedby={`${kindName}-${k.kind}`}
                />
                <span>
                  <strong>{k.label}</strong> <code>{k.prefix}…</code> — {k.where}
                  <span className="kind-hint" id={`${kindName}-${k.kind}`}>
                    {k.hint}
                  </span>
                </span>
              </label>
            ))}
            {fieldErrorOf(create.error, "kind") && <div className="field-error">{fieldErrorOf(create.error, "kind")}</div>}
          </fieldset>
          <Button type="submit" variant="primary" busy={create.isPending} disabled={!environmentId}>
            Create {kindInfo(kind).label.toLowerCase()}
          </Button>
        </form>
        {create.error && <ErrorBanner action="manage SDK keys" error={create.error} />}
        {created && (
          <div className="created-key">
            <SecretOnce
              label={`${kindInfo(createdKind).label} “${created.name}” for ${created.environment_name}`}
              secret={created.key}
            />
            <p>
              {createdKind === "client" ? (
                <>
                  Put it in your web page or app: it is safe to publish. It sees only the <em>Client-side</em> flags of{" "}
                  {created.environment_name} — <Link to={envPath(projectId, created.environment_id, "flags?client_side=1")}>
                    see which
                  </Link>
                  .
                </>
              ) : (
                <>
                  Keep it on your servers, in an environment variable or a secret store; never ship it in a page or an app
                  (create a client key for those).
                </>
              )}
            </p>
            <Snippets snippets={snippetsFor(createdKind, created.key, window.location.origin)} />
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
                <th scope="col">Kind</th>
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
                    <span className={`pill kind-pill kind-${k.kind ?? "server"}`}>{kindInfo(k.kind ?? "server").label}</span>{" "}
                    <span className="muted">{kindInfo(k.kind ?? "server").where}</span>
                  </td>
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
                    <HistoryLink type="sdk_key" id={String(k.id)} projectId={projectId} of={k.name} />{" "}
                    <RowAction danger label="Revoke" of={k.name} start={() => { revoke.reset(); setRevoking(k); }} />
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
            {(revoking.kind ?? "server") === "client" ? "Pages and apps" : "Services"} using <code>{revoking.prefix}…</code> (
            {revoking.environment_name}) lose access immediately, on every server instance.
          </p>
          {(revoking.kind ?? "server") === "client" ? null : serverKeys.length === 1 ? (
            <p className="banner banner-warning">
              This is the project&apos;s only server key; the server refuses to revoke it. Create a replacement first.
            </p>
          ) : (
            perEnv.get(revoking.environment_id) === 1 && (
              <p className="banner banner-warning">
                This is the only server key of {revoking.environment_name}: no service will be able to read its flags until
                you create another.
              </p>
            )
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
