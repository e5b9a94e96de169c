// Workspace single sign-on (workspace admins): the OpenID Connect provider,
// who may sign in, group mappings, test connection, turn off (docs/sso.md).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent, type ReactElement } from "react";
import { Link } from "react-router";
import { ApiError, isUnder, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, CopyButton, ErrorBanner, Field, Loading, Notice, PageHeader } from "../../components/ui";
import { keys, useProjects } from "../../lib/session";
import "./admin.css";
import {
  MAPPING_ROLES,
  issuerProblem,
  mappingField,
  newMappingRow,
  ssoBody,
  ssoFormFrom,
  validateSso,
  type MappingRow,
  type SsoForm,
} from "./ssoform";

type Settings = Schemas["SSOSettings"];
export const ssoKey = ["workspace-sso"] as const;

const CALLBACK_PATH = "/api/auth/oidc/callback";

// The fields the form shows server problems next to; others go to the banner.
const FORM_FIELDS = [
  "issuer",
  "client_id",
  "client_secret",
  "scopes",
  "groups_claim",
  "allowed_email_domains",
  "auto_provision",
  "password_login",
  "admin_groups",
];

const PASSWORD_LOGIN_LABEL: Record<Schemas["SSOPasswordLogin"], string> = {
  enabled: "Everyone can also sign in with a password",
  admins_only: "Only workspace admins can sign in with a password",
};

// serverError is the server's problem with a field, as "“value”: message"
// for one item of a list (allowed_email_domains[2]) when the sent list is known.
function serverError(err: unknown, field: string, sent?: string[]): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const messages = err.details
    .filter((d) => isUnder(d.field, field))
    .map((d) => {
      const index = /^[.[](\d+)/.exec(d.field.slice(field.length))?.[1];
      const value = index !== undefined ? sent?.[Number(index)] : undefined;
      return value !== undefined ? `“${value}”: ${d.message}` : d.message;
    });
  return messages.length > 0 ? messages.join(" ") : undefined;
}

// The server names a mapping's field group_mappings[0].group; its request
// validator, group_mappings.0.group.
const mappingPaths = (i: number, f: "group" | "project_id" | "role") => [mappingField(i, f), `group_mappings.${i}.${f}`];

export default function Sso() {
  const api = useApi();
  const qc = useQueryClient();
  const settings = useQuery({
    queryKey: ssoKey,
    // 404 is single sign-on off, not a failure.
    queryFn: async (): Promise<Settings | null> => {
      try {
        return await unwrap(api.GET("/api/workspace/sso"));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
  });
  // The form starts again from what the server stored after each save or
  // turn-off (and so with an empty secret field).
  const [version, setVersion] = useState(0);
  const [status, setStatus] = useState<{ text: string; at: "top" | "form" } | null>(null);
  const [confirmingOff, setConfirmingOff] = useState(false);

  const refresh = (stored: Settings | null) => {
    qc.setQueryData(ssoKey, stored);
    void qc.invalidateQueries({ queryKey: ssoKey });
    void qc.invalidateQueries({ queryKey: keys.ssoInfo });
    setVersion((v) => v + 1);
  };

  const turnOff = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/workspace/sso")),
    onSuccess: () => {
      setConfirmingOff(false);
      refresh(null);
      setStatus({ text: "Turned off. Everyone signs in with a password again; users keep their accounts.", at: "top" });
    },
  });

  const on = Boolean(settings.data);
  return (
    <div className="admin-page">
      <PageHeader
        title="Single sign-on"
        actions={
          on && (
            <Button
              variant="danger"
              onClick={() => {
                turnOff.reset();
                setConfirmingOff(true);
              }}
            >
              Turn off single sign-on
            </Button>
          )
        }
      >
        People sign in through your organisation's identity provider (OpenID Connect). Personal access tokens keep working
        either way.
      </PageHeader>
      {status?.at === "top" && <Notice kind="success">{status.text}</Notice>}
      {settings.isPending ? (
        <Loading />
      ) : settings.error ? (
        <ErrorBanner action="manage single sign-on" error={settings.error} />
      ) : (
        <>
          <p className="sso-state">
            {settings.data ? (
              <>
                <span className="pill pill-success">On</span> Single sign-on is on: the sign-in page offers “Sign in with
                SSO”.
              </>
            ) : (
              <>
                <span className="pill">Off</span> Single sign-on is off. Fill in the provider's details below and save to
                turn it on.
              </>
            )}
          </p>
          <RedirectUri settings={settings.data} />
          <SsoSettingsForm
            key={version}
            settings={settings.data}
            notice={status?.at === "form" ? status.text : undefined}
            onSaved={(stored, wasOn) => {
              refresh(stored);
              setStatus({
                text: wasOn
                  ? "Saved. The next sign-in uses these settings."
                  : "Saved: single sign-on is on. The sign-in page now offers “Sign in with SSO”.",
                at: "form",
              });
            }}
            onEdit={() => setStatus(null)}
          />
          <p className="muted">
            To create, update and deactivate users from the identity provider as people join and leave, set up{" "}
            <Link to="/admin/scim">SCIM provisioning</Link>.
          </p>
        </>
      )}
      {confirmingOff && (
        <ConfirmDialog
          action="manage single sign-on"
          title="Turn off single sign-on?"
          confirmLabel="Turn off"
          busy={turnOff.isPending}
          error={turnOff.error}
          onConfirm={() => turnOff.mutate()}
          onClose={() => setConfirmingOff(false)}
        >
          <p>
            The sign-in page stops offering “Sign in with SSO” and everyone signs in with a password again. The settings,
            the stored client secret included, are removed. Users keep their accounts and their links to the provider.
          </p>
          <p>People who only ever signed in through the provider have no password and cannot sign in until you turn it on again.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

// RedirectUri is the address to register with the provider. The server
// builds it from PUBLIC_URL; while single sign-on is off it is not known, and
// the address this browser uses is the best guess.
function RedirectUri({ settings }: { settings: Settings | null }) {
  const uri = settings?.redirect_uri ?? window.location.origin + CALLBACK_PATH;
  const labelId = useId();
  return (
    <section className="card admin-section" aria-labelledby={labelId}>
      <h2 id={labelId}>Redirect URI</h2>
      <p>Register this address with the provider as the application's redirect (callback) URI:</p>
      <div className="secret-row">
        <code data-testid="redirect-uri">{uri}</code>
        <CopyButton label="Copy the redirect URI" text={uri} />
      </div>
      {!settings && (
        <p className="field-hint">
          The server builds it from its <code>PUBLIC_URL</code> setting; this is the address you are using now. If people
          reach Switchyard at another address, set <code>PUBLIC_URL</code> to it and register that one.
        </p>
      )}
    </section>
  );
}

function SsoSettingsForm({
  settings,
  notice,
  onSaved,
  onEdit,
}: {
  settings: Settings | null;
  notice?: string;
  onSaved: (stored: Settings, wasOn: boolean) => void;
  onEdit: () => void;
}) {
  const api = useApi();
  const projects = useProjects();
  const [form, setForm] = useState<SsoForm>(() => ssoFormFrom(settings));
  const [local, setLocal] = useState<Record<string, string>>({});
  const secretStored = Boolean(settings?.client_secret_set);

  const save = useMutation({
    mutationFn: (body: Schemas["SSOSettingsInput"]) => unwrap(api.PUT("/api/workspace/sso", { body })),
    onSuccess: (stored) => onSaved(stored, settings !== null),
  });
  const test = useMutation({
    mutationFn: (issuer: string) => unwrap(api.POST("/api/workspace/sso/test", { body: { issuer } })),
  });

  const set = <K extends keyof SsoForm>(field: K, value: SsoForm[K]) => {
    setForm((f) => ({ ...f, [field]: value }));
    onEdit();
  };
  const setRow = (key: number, change: Partial<MappingRow>) =>
    set(
      "mappings",
      form.mappings.map((m) => (m.key === key ? { ...m, ...change } : m)),
    );

  const sent = save.variables;
  const fieldErr = (field: string, list?: string[]) => local[field] ?? serverError(save.error, field, list);
  const rowErr = (i: number, f: "group" | "project_id" | "role") =>
    local[mappingField(i, f)] ?? mappingPaths(i, f).map((p) => serverError(save.error, p)).find(Boolean);
  const shownFields = [...FORM_FIELDS, ...form.mappings.flatMap((_, i) => (["group", "project_id", "role"] as const).flatMap((f) => mappingPaths(i, f)))];

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errors = validateSso(form, secretStored);
    setLocal(errors);
    if (Object.keys(errors).length === 0) save.mutate(ssoBody(form));
    else save.reset();
  };

  const testConnection = () => {
    const problem = issuerProblem(form.issuer);
    setLocal(({ issuer: _old, ...rest }) => (problem ? { ...rest, issuer: problem } : rest));
    if (!problem) test.mutate(form.issuer.trim());
  };

  const projectList = projects.data ?? [];
  return (
    <form className="sso-form" onSubmit={submit} noValidate aria-label="Single sign-on settings">
      <section className="card admin-section" aria-labelledby="sso-provider">
        <h2 id="sso-provider">Identity provider</h2>
        <Field
          label="Issuer URL"
          hint="The issuer exactly as the provider's discovery document states it, such as https://idp.example.com."
          error={fieldErr("issuer")}
        >
          {(p) => (
            <input
              {...p}
              type="url"
              value={form.issuer}
              onChange={(e) => {
                set("issuer", e.target.value);
                test.reset();
              }}
              autoComplete="off"
              placeholder="https://idp.example.com"
            />
          )}
        </Field>
        <div className="row sso-test">
          <Button onClick={testConnection} busy={test.isPending}>
            Test connection
          </Button>
          <span className="muted">Fetches the provider's discovery document and signing keys; nothing is saved.</span>
        </div>
        {test.data && <TestSuccess discovery={test.data} />}
        {test.error !== null && <TestFailure error={test.error} />}
        <Field label="Client ID" error={fieldErr("client_id")}>
          {(p) => <input {...p} value={form.client_id} onChange={(e) => set("client_id", e.target.value)} autoComplete="off" />}
        </Field>
        <Field
          label="Client secret"
          hint={
            secretStored
              ? "A secret is stored and never shown. Enter it again to save changes."
              : "Stored sealed; never shown again or logged."
          }
          error={fieldErr("client_secret")}
        >
          {(p) => (
            <input
              {...p}
              type="password"
              value={form.client_secret}
              onChange={(e) => set("client_secret", e.target.value)}
              autoComplete="new-password"
            />
          )}
        </Field>
        <Field
          label="Scopes"
          hint="Separated by spaces or commas; must include openid. Add the scope your provider needs to send groups."
          error={fieldErr("scopes", sent?.scopes)}
        >
          {(p) => <input {...p} value={form.scopes} onChange={(e) => set("scopes", e.target.value)} autoComplete="off" />}
        </Field>
        <Field label="Groups claim" hint="The claim that lists a user's groups. Blank: groups." error={fieldErr("groups_claim")}>
          {(p) => <input {...p} value={form.groups_claim} onChange={(e) => set("groups_claim", e.target.value)} autoComplete="off" />}
        </Field>
      </section>

      <section className="card admin-section" aria-labelledby="sso-who">
        <h2 id="sso-who">Who may sign in</h2>
        <Field
          label="Allowed email domains"
          hint="Separated by commas, such as example.com, example.org. Blank: any domain."
          error={fieldErr("allowed_email_domains", sent?.allowed_email_domains)}
        >
          {(p) => <input {...p} value={form.domains} onChange={(e) => set("domains", e.target.value)} autoComplete="off" />}
        </Field>
        <Checkbox
          label="Create accounts at first sign-in"
          hint={
            form.auto_provision
              ? "Someone new gets an account with the workspace role viewer (admin through an admin group)."
              : "Only people who already have an account here can sign in."
          }
          checked={form.auto_provision}
          onChange={(v) => set("auto_provision", v)}
          error={fieldErr("auto_provision")}
        />
        <Field
          label="Password sign-in"
          hint={
            form.password_login === "admins_only"
              ? "Everyone else must use single sign-on; the sign-in page keeps a password form for admins behind a link, so an admin can still get in if the provider fails."
              : "The sign-in page offers both single sign-on and the password form."
          }
          error={fieldErr("password_login")}
        >
          {(p) => (
            <select
              {...p}
              value={form.password_login}
              onChange={(e) => set("password_login", e.target.value as Schemas["SSOPasswordLogin"])}
            >
              {(Object.keys(PASSWORD_LOGIN_LABEL) as Schemas["SSOPasswordLogin"][]).map((v) => (
                <option key={v} value={v}>
                  {PASSWORD_LOGIN_LABEL[v]}
                </option>
              ))}
            </select>
          )}
        </Field>
      </section>

      <section className="card admin-section" aria-labelledby="sso-groups">
        <h2 id="sso-groups">Groups</h2>
        <Field
          label="Admin groups"
          hint="Separated by commas. Members are workspace admins; when set, everyone else loses workspace admin at their next sign-in. Blank: sign-ins leave workspace roles alone."
          error={fieldErr("admin_groups", sent?.admin_groups)}
        >
          {(p) => <input {...p} value={form.admin_groups} onChange={(e) => set("admin_groups", e.target.value)} autoComplete="off" />}
        </Field>
        <h3 id="sso-mappings">Group mappings</h3>
        <p className="field-hint" id="sso-mappings-hint">
          Members of a group get the role in the project at each sign-in, and at once when SCIM changes the group (the
          highest one when several groups map to a project). Memberships added by hand are never changed.
        </p>
        {form.mappings.length === 0 ? (
          <p className="muted">No mappings: project memberships are given by hand.</p>
        ) : (
          <div className="table-wrap">
            <table className="mapping-table" aria-labelledby="sso-mappings" aria-describedby="sso-mappings-hint">
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">Project</th>
                  <th scope="col">Role</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {form.mappings.map((m, i) => (
                  <tr key={m.key}>
                    <td>
                      <Cell label={`Group, row ${i + 1}`} error={rowErr(i, "group")}>
                        {(p) => <input {...p} value={m.group} onChange={(e) => setRow(m.key, { group: e.target.value })} autoComplete="off" />}
                      </Cell>
                    </td>
                    <td>
                      <Cell label={`Project, row ${i + 1}`} error={rowErr(i, "project_id")}>
                        {(p) => (
                          <select {...p} value={m.project_id} onChange={(e) => setRow(m.key, { project_id: e.target.value })}>
                            <option value="">Choose a project…</option>
                            {projectList.map((pr) => (
                              <option key={pr.id} value={pr.id}>
                                {pr.name}
                              </option>
                            ))}
                            {m.project_id && !projectList.some((pr) => pr.id === m.project_id) && (
                              <option value={m.project_id}>Unknown project ({m.project_id})</option>
                            )}
                          </select>
                        )}
                      </Cell>
                    </td>
                    <td>
                      <Cell label={`Role, row ${i + 1}`} error={rowErr(i, "role")}>
                        {(p) => (
                          <select {...p} value={m.role} onChange={(e) => setRow(m.key, { role: e.target.value as Schemas["Role"] })}>
                            {MAPPING_ROLES.map((r) => (
                              <option key={r} value={r}>
                                {r}
                              </option>
                            ))}
                          </select>
                        )}
                      </Cell>
                    </td>
                    <td className="actions-cell">
                      <Button
                        className="btn-small"
                        variant="danger"
                        aria-label={`Remove row ${i + 1}`}
                        onClick={() => {
                          // Server problems name rows by position: they no longer fit.
                          save.reset();
                          setLocal({});
                          set(
                            "mappings",
                            form.mappings.filter((x) => x.key !== m.key),
                          );
                        }}
                      >
                        Remove
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Button className="sso-add-row" onClick={() => set("mappings", [...form.mappings, newMappingRow()])}>
          Add mapping
        </Button>
      </section>

      <ErrorBanner action="manage single sign-on" error={save.error} shownFields={shownFields} />
      {Object.keys(local).length > 0 && (
        <div className="banner banner-error" role="alert">
          Check the fields marked above.
        </div>
      )}
      {notice && <Notice kind="success">{notice}</Notice>}
      <div className="row">
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save
        </Button>
        <span className="muted">Before saving, the server checks that the provider answers.</span>
      </div>
    </form>
  );
}

function TestSuccess({ discovery: d }: { discovery: Schemas["SSODiscovery"] }) {
  return (
    <Notice kind="success">
      <strong>The provider answered.</strong>
      <dl className="sso-discovery">
        <dt>Issuer</dt>
        <dd>
          <code>{d.issuer}</code>
        </dd>
        <dt>Authorization endpoint</dt>
        <dd>
          <code>{d.authorization_endpoint}</code>
        </dd>
        <dt>Token endpoint</dt>
        <dd>
          <code>{d.token_endpoint}</code>
        </dd>
        <dt>UserInfo endpoint</dt>
        <dd>{d.userinfo_endpoint ? <code>{d.userinfo_endpoint}</code> : "none"}</dd>
        <dt>Signing keys</dt>
        <dd>{d.signing_keys}</dd>
      </dl>
    </Notice>
  );
}

// TestFailure shows why discovery failed: the server's message and, in the
// first detail, the reason (a refused connection, another issuer, …).
function TestFailure({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.status !== 422) {
    return <ErrorBanner action="test single sign-on" error={error} />;
  }
  const reason = error.details[0]?.message;
  return (
    <div className="banner banner-error" role="alert">
      <strong>The connection test failed: {error.message}</strong>
      {reason && <p className="sso-reason">{reason}</p>}
    </div>
  );
}

// Checkbox is a labelled checkbox with Field's hint and error wiring.
function Checkbox({
  label,
  hint,
  error,
  checked,
  onChange,
}: {
  label: string;
  hint: string;
  error?: string;
  checked: boolean;
  onChange: (v: boolean) => void;
}) {
  const id = useId();
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label className="sso-check">
        <input
          type="checkbox"
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          aria-describedby={[id + "-hint", error ? id + "-err" : ""].filter(Boolean).join(" ")}
          aria-invalid={error ? true : undefined}
        />{" "}
        {label}
      </label>
      <div className="field-hint" id={id + "-hint"}>
        {hint}
      </div>
      {error && (
        <div className="field-error" id={id + "-err"} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

// Cell is a table cell's control: labelled for screen readers (the column
// header says it to the eye), with its error under it.
function Cell({
  label,
  error,
  children,
}: {
  label: string;
  error?: string;
  children: (props: { "aria-label": string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ReactElement;
}) {
  const id = useId();
  return (
    <div className={error ? "field-invalid" : undefined}>
      {children({ "aria-label": label, "aria-describedby": error ? id : undefined, "aria-invalid": error ? true : undefined })}
      {error && (
        <div className="field-error" id={id} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
