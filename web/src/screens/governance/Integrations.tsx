// Webhooks & chat: where this environment's flag and change-request events go.
// Both are project-admin features; the server answers 403 to anyone else.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { ApiError, isForbidden, type Schemas, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Modal, Notice, PageHeader, SecretOnce, Time, Toggle } from "../../components/ui";
import { useScope } from "../../lib/session";
import "./governance.css";

type Webhook = Schemas["Webhook"];
type Chat = Schemas["ChatIntegration"];
type ChatKind = Schemas["ChatKind"];
type NotificationEvent = Schemas["NotificationEvent"];
type Delivery = Schemas["WebhookDelivery"] | Schemas["ChatDelivery"];

export const EVENTS: NotificationEvent[] = [
  "flag.created",
  "flag.updated",
  "flag.deleted",
  "flag.promoted",
  "change_request.opened",
  "change_request.approved",
  "change_request.rejected",
];
const KIND_LABEL: Record<ChatKind, string> = { slack: "Slack", teams: "Microsoft Teams" };

export const integrationKeys = {
  webhooks: (envId: string) => ["webhooks", envId] as const,
  webhookDeliveries: (envId: string, id: string) => ["webhooks", envId, id, "deliveries"] as const,
  chats: (envId: string) => ["integrations", envId] as const,
  chatDeliveries: (envId: string, id: string) => ["integrations", envId, id, "deliveries"] as const,
};

// newSecret is 32 random bytes as hex, for signing webhook payloads.
export function newSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export default function Integrations() {
  const { envId, env } = useScope();
  return (
    <div className="stack gov">
      <PageHeader title="Webhooks & chat">
        Send this environment’s flag changes and change-request events{env ? ` (${env.name})` : ""} to your systems
        and team channels.
      </PageHeader>
      <WebhooksSection envId={envId} />
      <ChatSection envId={envId} />
    </div>
  );
}

// ---------- Webhooks ----------

function WebhooksSection({ envId }: { envId: string }) {
  const api = useApi();
  const qc = useQueryClient();
  const [editing, setEditing] = useState<Webhook | "new" | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [announce, setAnnounce] = useState("");
  const list = useQuery({
    queryKey: integrationKeys.webhooks(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/webhooks", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const refresh = () => qc.invalidateQueries({ queryKey: integrationKeys.webhooks(envId) });
  const toggle = useMutation({
    mutationFn: (v: { id: string; enabled: boolean }) =>
      unwrap(
        api.PATCH("/api/environments/{env_id}/webhooks/{id}", {
          params: { path: { env_id: envId, id: v.id } },
          body: { enabled: v.enabled },
        }),
      ),
    onSuccess: (w) => {
      setAnnounce(`${w.name} is ${w.enabled ? "enabled" : "disabled"}.`);
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE("/api/environments/{env_id}/webhooks/{id}", { params: { path: { env_id: envId, id } } })),
    onSuccess: () => {
      setAnnounce(`Deleted webhook ${deleting?.name ?? ""}.`);
      setDeleting(null);
      void refresh();
    },
  });

  return (
    <section className="card gov-section" aria-labelledby="webhooks-title">
      <div className="gov-item-head">
        <div>
          <h2 id="webhooks-title">Webhooks</h2>
          <p className="muted">
            Every event is POSTed as JSON; with a secret, the body is signed (HMAC-SHA256 in{" "}
            <code>X-Service-Signature</code>). Failed deliveries are retried three times.
          </p>
        </div>
        {!isForbidden(list.error) && (
          <Button variant="primary" onClick={() => setEditing("new")}>
            Add webhook
          </Button>
        )}
      </div>
      {announce && <Notice kind="success">{announce}</Notice>}
      <ErrorBanner error={toggle.error} action="change webhooks" />
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBanner error={list.error} action="manage webhooks (project admins only)" />
      ) : list.data.length === 0 ? (
        <Empty title="No webhooks yet" />
      ) : (
        <div className="table-wrap">
          <table className="gov-table">
            <caption className="sr-only">Webhooks</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">URL</th>
                <th scope="col">Signed</th>
                <th scope="col">Enabled</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((w) => (
                <Fragment key={w.id}>
                  <tr>
                    <th scope="row">{w.name}</th>
                    <td className="gov-wrap">
                      <code>{w.url}</code>
                    </td>
                    <td>{w.has_secret ? <span className="pill pill-success">signed</span> : <span className="muted">no secret</span>}</td>
                    <td>
                      <Toggle
                        checked={w.enabled}
                        label={`Enable webhook ${w.name}`}
                        disabled={toggle.isPending}
                        onChange={(enabled) => toggle.mutate({ id: w.id, enabled })}
                      />
                    </td>
                    <td>
                      <Time value={w.created_at} />
                    </td>
                    <td>
                      <div className="row">
                        <Button className="btn-small" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                          Deliveries
                        </Button>
                        <Button className="btn-small" onClick={() => setEditing(w)}>
                          Edit
                        </Button>
                        <Button
                          className="btn-small"
                          variant="ghost"
                          onClick={() => {
                            remove.reset();
                            setDeleting(w);
                          }}
                        >
                          Delete
                        </Button>
                      </div>
                    </td>
                  </tr>
                  {open === w.id && (
                    <tr className="gov-expanded">
                      <td colSpan={6}>
                        <WebhookDeliveries envId={envId} id={w.id} name={w.name} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <WebhookForm
          envId={envId}
          webhook={editing === "new" ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={(w, created) => {
            setAnnounce(created ? `Created webhook ${w.name}.` : `Saved webhook ${w.name}.`);
            void refresh();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete webhook ${deleting.name}?`}
          confirmLabel="Delete webhook"
          busy={remove.isPending}
          error={remove.error}
          action="delete webhooks"
          onConfirm={() => remove.mutate(deleting.id)}
          onClose={() => setDeleting(null)}
        >
          Events will no longer be sent to <code>{deleting.url}</code>. Its delivery log is deleted too.
        </ConfirmDialog>
      )}
    </section>
  );
}

type SecretMode = "keep" | "set" | "remove";

function WebhookForm({
  envId,
  webhook,
  onClose,
  onSaved,
}: {
  envId: string;
  webhook?: Webhook;
  onClose: () => void;
  onSaved: (w: Webhook, created: boolean) => void;
}) {
  const api = useApi();
  const [name, setName] = useState(webhook?.name ?? "");
  const [url, setUrl] = useState(webhook?.url ?? "");
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [secretMode, setSecretMode] = useState<SecretMode>(webhook ? "keep" : "set");
  const [secret, setSecret] = useState("");
  const [shownSecret, setShownSecret] = useState<string | null>(null);
  const [local, setLocal] = useState<{ name?: string; url?: string }>({});

  const save = useMutation({
    mutationFn: async (): Promise<Webhook> => {
      if (!webhook) {
        const body: Schemas["WebhookInput"] = { name: name.trim(), url: url.trim(), enabled };
        if (secret) body.secret = secret;
        return unwrap(api.POST("/api/environments/{env_id}/webhooks", { params: { path: { env_id: envId } }, body }));
      }
      const body: Schemas["WebhookPatch"] = {};
      if (name.trim() !== webhook.name) body.name = name.trim();
      if (url.trim() !== webhook.url) body.url = url.trim();
      if (enabled !== webhook.enabled) body.enabled = enabled;
      if (secretMode === "set" && secret) body.secret = secret;
      if (secretMode === "remove") body.secret = null;
      return unwrap(
        api.PATCH("/api/environments/{env_id}/webhooks/{id}", { params: { path: { env_id: envId, id: webhook.id } }, body }),
      );
    },
    onSuccess: (w) => {
      onSaved(w, !webhook);
      if (secretMode === "set" && secret) setShownSecret(secret);
      else onClose();
    },
  });
  const apiErr = save.error instanceof ApiError ? save.error : undefined;

  if (shownSecret) {
    return (
      <Modal title="Webhook saved" onClose={onClose}>
        <div className="stack">
          <SecretOnce label="Signing secret" secret={shownSecret} />
          <p className="muted">
            Verify deliveries by computing HMAC-SHA256 of the raw body with this secret and comparing it with the{" "}
            <code>X-Service-Signature</code> header (<code>sha256=&lt;hex&gt;</code>).
          </p>
          <div className="row gov-actions-end">
            <Button variant="primary" onClick={onClose}>
              Done
            </Button>
          </div>
        </div>
      </Modal>
    );
  }

  return (
    <Modal title={webhook ? `Edit webhook ${webhook.name}` : "Add a webhook"} onClose={onClose}>
      <form
        className="stack"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs: typeof local = {};
          if (!name.trim()) errs.name = "Give the webhook a name.";
          if (!url.trim()) errs.url = "Enter the URL to deliver to.";
          setLocal(errs);
          if (Object.keys(errs).length === 0) save.mutate();
        }}
      >
        <Field label="Name" error={local.name ?? apiErr?.fieldError("name")}>
          {(p) => <input {...p} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="URL" hint="Receives a POST for every event." error={local.url ?? apiErr?.fieldError("url")}>
          {(p) => (
            <input {...p} type="url" value={url} maxLength={2048} placeholder="https://" onChange={(e) => setUrl(e.target.value)} />
          )}
        </Field>
        {webhook && (
          <fieldset className="gov-events">
            <legend>Signing secret {webhook.has_secret ? "(set)" : "(none)"}</legend>
            {(
              [
                ["keep", webhook.has_secret ? "Keep the current secret" : "No secret"],
                ["set", webhook.has_secret ? "Replace it" : "Add a secret"],
                ...(webhook.has_secret ? [["remove", "Remove it (unsigned deliveries)"]] : []),
              ] as [SecretMode, string][]
            ).map(([mode, label]) => (
              <label key={mode}>
                <input type="radio" name="secret-mode" checked={secretMode === mode} onChange={() => setSecretMode(mode)} /> {label}
              </label>
            ))}
          </fieldset>
        )}
        {secretMode === "set" && (
          <Field
            label={webhook ? "New secret" : "Signing secret (optional)"}
            hint="Shown once after saving; the server never returns it."
            error={apiErr?.fieldError("secret")}
          >
            {(p) => (
              <div className="row">
                <input
                  {...p}
                  value={secret}
                  maxLength={1024}
                  autoComplete="off"
                  spellCheck={false}
                  onChange={(e) => setSecret(e.target.value)}
                />
                <Button onClick={() => setSecret(newSecret())}>Generate</Button>
              </div>
            )}
          </Field>
        )}
        <label className="gov-check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
        <ErrorBanner error={save.error} action="manage webhooks" shownFields={["name", "url", "secret"]} />
        <div className="row gov-actions-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={save.isPending}>
            {webhook ? "Save" : "Create webhook"}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

function WebhookDeliveries({ envId, id, name }: { envId: string; id: string; name: string }) {
  const api = useApi();
  const q = useQuery({
    queryKey: integrationKeys.webhookDeliveries(envId, id),
    queryFn: () =>
      unwrap(api.GET("/api/environments/{env_id}/webhooks/{id}/deliveries", { params: { path: { env_id: envId, id } } })),
  });
  return <DeliveryLog title={`Deliveries of ${name}`} query={q} onRefresh={() => void q.refetch()} />;
}

// ---------- Chat ----------

function ChatSection({ envId }: { envId: string }) {
  const api = useApi();
  const qc = useQueryClient();
  const [editing, setEditing] = useState<Chat | "new" | null>(null);
  const [deleting, setDeleting] = useState<Chat | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [announce, setAnnounce] = useState("");
  const [testResult, setTestResult] = useState<{ name: string; delivery: Schemas["ChatDelivery"] } | null>(null);
  const list = useQuery({
    queryKey: integrationKeys.chats(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/integrations", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const refresh = () => qc.invalidateQueries({ queryKey: integrationKeys.chats(envId) });
  const toggle = useMutation({
    mutationFn: (v: { id: string; enabled: boolean }) =>
      unwrap(
        api.PATCH("/api/environments/{env_id}/integrations/{id}", {
          params: { path: { env_id: envId, id: v.id } },
          body: { enabled: v.enabled },
        }),
      ),
    onSuccess: (c) => {
      setAnnounce(`${c.name} is ${c.enabled ? "enabled" : "disabled"}.`);
      void refresh();
    },
  });
  const test = useMutation({
    mutationFn: (c: Chat) =>
      unwrap(api.POST("/api/environments/{env_id}/integrations/{id}/test", { params: { path: { env_id: envId, id: c.id } } })),
    onMutate: () => setTestResult(null),
    onSuccess: (delivery, c) => {
      setTestResult({ name: c.name, delivery });
      void qc.invalidateQueries({ queryKey: integrationKeys.chatDeliveries(envId, c.id) });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE("/api/environments/{env_id}/integrations/{id}", { params: { path: { env_id: envId, id } } })),
    onSuccess: () => {
      setAnnounce(`Disconnected ${deleting?.name ?? "the integration"}.`);
      setDeleting(null);
      void refresh();
    },
  });

  return (
    <section className="card gov-section" aria-labelledby="chat-title">
      <div className="gov-item-head">
        <div>
          <h2 id="chat-title">Chat alerts</h2>
          <p className="muted">
            Post a message to a Slack or Microsoft Teams channel through an incoming webhook. Change requests are
            colour-coded: amber queued, green approved, red rejected.
          </p>
        </div>
        {!isForbidden(list.error) && (
          <Button variant="primary" onClick={() => setEditing("new")}>
            Connect a channel
          </Button>
        )}
      </div>
      {announce && <Notice kind="success">{announce}</Notice>}
      <TestResult result={testResult} />
      <ErrorBanner error={test.error} action="send test messages" />
      <ErrorBanner error={toggle.error} action="change chat integrations" />
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBanner error={list.error} action="manage chat integrations (project admins only)" />
      ) : list.data.length === 0 ? (
        <Empty title="No chat integrations yet" />
      ) : (
        <div className="table-wrap">
          <table className="gov-table">
            <caption className="sr-only">Chat integrations</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">Enabled</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((c) => (
                <Fragment key={c.id}>
                  <tr>
                    <th scope="row">{c.name}</th>
                    <td>{KIND_LABEL[c.kind]}</td>
                    <td>
                      <code>{c.webhook_url_preview}</code>
                    </td>
                    <td className="gov-wrap">
                      {c.events.length === 0 ? (
                        <span className="muted">all events</span>
                      ) : (
                        c.events.map((e) => (
                          <span key={e} className="tag">
                            {e}
                          </span>
                        ))
                      )}
                    </td>
                    <td>
                      <Toggle
                        checked={c.enabled}
                        label={`Enable chat integration ${c.name}`}
                        disabled={toggle.isPending}
                        onChange={(enabled) => toggle.mutate({ id: c.id, enabled })}
                      />
                    </td>
                    <td>
                      <div className="row">
                        <Button
                          className="btn-small"
                          busy={test.isPending && test.variables?.id === c.id}
                          onClick={() => test.mutate(c)}
                        >
                          Send test message
                        </Button>
                        <Button className="btn-small" aria-expanded={open === c.id} onClick={() => setOpen(open === c.id ? null : c.id)}>
                          Deliveries
                        </Button>
                        <Button className="btn-small" onClick={() => setEditing(c)}>
                          Edit
                        </Button>
                        <Button
                          className="btn-small"
                          variant="ghost"
                          onClick={() => {
                            remove.reset();
                            setDeleting(c);
                          }}
                        >
                          Delete
                        </Button>
                      </div>
                    </td>
                  </tr>
                  {open === c.id && (
                    <tr className="gov-expanded">
                      <td colSpan={6}>
                        <ChatDeliveries envId={envId} id={c.id} name={c.name} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <ChatForm
          envId={envId}
          chat={editing === "new" ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={(c, created) => {
            setAnnounce(created ? `Connected ${c.name}. Send a test message to check it.` : `Saved ${c.name}.`);
            setEditing(null);
            void refresh();
          }}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Disconnect ${deleting.name}?`}
          confirmLabel="Disconnect"
          busy={remove.isPending}
          error={remove.error}
          action="delete chat integrations"
          onConfirm={() => remove.mutate(deleting.id)}
          onClose={() => setDeleting(null)}
        >
          The {KIND_LABEL[deleting.kind]} channel will stop receiving alerts from this environment.
        </ConfirmDialog>
      )}
    </section>
  );
}

function deliveryOk(d: Delivery): boolean {
  return d.status_code != null && d.status_code >= 200 && d.status_code < 300 && !d.error;
}

function TestResult({ result }: { result: { name: string; delivery: Schemas["ChatDelivery"] } | null }) {
  if (!result) return null;
  const d = result.delivery;
  if (deliveryOk(d)) {
    return (
      <Notice kind="success">
        Test message delivered to {result.name} (HTTP {d.status_code}).
      </Notice>
    );
  }
  return (
    <div className="banner banner-error" role="alert">
      <strong>
        Test message to {result.name} failed
        {d.status_code != null ? ` (HTTP ${d.status_code})` : ""}.
      </strong>{" "}
      {d.error ?? d.response_body ?? ""}
      {d.status_code != null && d.status_code >= 400 && d.status_code < 500 && (
        <div>The provider rejected the message: check the webhook URL.</div>
      )}
      {d.status_code == null && <div>The host could not be reached.</div>}
    </div>
  );
}

function ChatForm({
  envId,
  chat,
  onClose,
  onSaved,
}: {
  envId: string;
  chat?: Chat;
  onClose: () => void;
  onSaved: (c: Chat, created: boolean) => void;
}) {
  const api = useApi();
  const [kind, setKind] = useState<ChatKind>(chat?.kind ?? "slack");
  const [name, setName] = useState(chat?.name ?? "");
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<NotificationEvent[]>(chat?.events ?? []);
  const [enabled, setEnabled] = useState(chat?.enabled ?? true);
  const [local, setLocal] = useState<{ name?: string; url?: string }>({});

  const save = useMutation({
    mutationFn: async (): Promise<Chat> => {
      const ordered = EVENTS.filter((e) => events.includes(e));
      if (!chat) {
        return unwrap(
          api.POST("/api/environments/{env_id}/integrations", {
            params: { path: { env_id: envId } },
            body: { kind, name: name.trim(), webhook_url: url.trim(), events: ordered, enabled },
          }),
        );
      }
      const body: Schemas["ChatIntegrationPatch"] = {};
      if (name.trim() !== chat.name) body.name = name.trim();
      if (url.trim()) body.webhook_url = url.trim();
      if (JSON.stringify(ordered) !== JSON.stringify(EVENTS.filter((e) => chat.events.includes(e)))) body.events = ordered;
      if (enabled !== chat.enabled) body.enabled = enabled;
      return unwrap(
        api.PATCH("/api/environments/{env_id}/integrations/{id}", { params: { path: { env_id: envId, id: chat.id } }, body }),
      );
    },
    onSuccess: (c) => onSaved(c, !chat),
  });
  const apiErr = save.error instanceof ApiError ? save.error : undefined;

  return (
    <Modal title={chat ? `Edit ${chat.name}` : "Connect a chat channel"} onClose={onClose}>
      <form
        className="stack"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs: typeof local = {};
          if (!name.trim()) errs.name = "Give the integration a name.";
          if (!chat && !url.trim()) errs.url = "Paste the channel’s incoming-webhook URL.";
          setLocal(errs);
          if (Object.keys(errs).length === 0) save.mutate();
        }}
      >
        {chat ? (
          <p className="muted">Provider: {KIND_LABEL[chat.kind]}</p>
        ) : (
          <Field label="Provider" error={apiErr?.fieldError("kind")}>
            {(p) => (
              <select {...p} value={kind} onChange={(e) => setKind(e.target.value as ChatKind)}>
                <option value="slack">Slack</option>
                <option value="teams">Microsoft Teams</option>
              </select>
            )}
          </Field>
        )}
        <Field label="Name" error={local.name ?? apiErr?.fieldError("name")}>
          {(p) => <input {...p} value={name} maxLength={200} placeholder="#releases" onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field
          label="Webhook URL"
          hint={
            chat
              ? `Current URL ends ${chat.webhook_url_preview}. Leave empty to keep it.`
              : "HTTPS. It is a credential: it is never shown again after saving."
          }
          error={local.url ?? apiErr?.fieldError("webhook_url")}
        >
          {(p) => (
            <input
              {...p}
              type="url"
              value={url}
              maxLength={2048}
              autoComplete="off"
              placeholder={(chat?.kind ?? kind) === "slack" ? "https://hooks.slack.com/services/…" : "https://…webhook.office.com/…"}
              onChange={(e) => setUrl(e.target.value)}
            />
          )}
        </Field>
        <fieldset className="gov-events" aria-describedby="chat-events-hint">
          <legend>Events</legend>
          {EVENTS.map((ev) => (
            <label key={ev}>
              <input
                type="checkbox"
                checked={events.includes(ev)}
                onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))}
              />{" "}
              {ev}
            </label>
          ))}
          <div className="field-hint" id="chat-events-hint">
            {events.length === 0 ? "None selected: every event is sent." : `${events.length} selected.`}
          </div>
          {apiErr?.fieldError("events") && <div className="field-error">{apiErr.fieldError("events")}</div>}
        </fieldset>
        <label className="gov-check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
        <ErrorBanner error={save.error} action="manage chat integrations" shownFields={["kind", "name", "webhook_url", "events"]} />
        <div className="row gov-actions-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={save.isPending}>
            {chat ? "Save" : "Connect"}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

function ChatDeliveries({ envId, id, name }: { envId: string; id: string; name: string }) {
  const api = useApi();
  const q = useQuery({
    queryKey: integrationKeys.chatDeliveries(envId, id),
    queryFn: () =>
      unwrap(api.GET("/api/environments/{env_id}/integrations/{id}/deliveries", { params: { path: { env_id: envId, id } } })),
  });
  return <DeliveryLog title={`Deliveries of ${name}`} query={q} onRefresh={() => void q.refetch()} />;
}

// ---------- Delivery log ----------

function DeliveryLog({
  title,
  query,
  onRefresh,
}: {
  title: string;
  query: { isPending: boolean; isFetching: boolean; error: unknown; data?: Delivery[] };
  onRefresh: () => void;
}) {
  if (query.isPending) return <Loading label="Loading deliveries…" />;
  if (query.error) return <ErrorBanner error={query.error} action="view the delivery log" />;
  const rows = query.data ?? [];
  return (
    <div className="stack">
      <div className="row">
        <h3 className="gov-item-title">{title}</h3>
        <Button className="btn-small" busy={query.isFetching} onClick={onRefresh}>
          Refresh
        </Button>
        <span className="muted">
          {rows.filter((d) => !deliveryOk(d)).length} of the last {rows.length} attempts failed. Each row is one
          attempt; failures are retried after 1 s, 5 s and 15 s.
        </span>
      </div>
      {rows.length === 0 ? (
        <p className="muted">No deliveries yet.</p>
      ) : (
        <div className="gov-scroll">
        <table className="gov-table">
          <caption className="sr-only">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Error / response</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id}>
                <td>
                  <Time value={d.delivered_at} />
                </td>
                <td>
                  <code>{d.event}</code>
                </td>
                <td>
                  <span className={`pill ${deliveryOk(d) ? "pill-success" : "pill-danger"}`}>
                    {d.status_code ?? "no response"}
                  </span>
                </td>
                <td className="gov-wrap">
                  {d.error ? <span className="field-error">{d.error}</span> : <span className="muted">{d.response_body || "—"}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </div>
  );
}
