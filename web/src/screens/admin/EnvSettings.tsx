// Project settings: the project's environments (name, colour, default,
// approval requirement, delete, create) and the project itself (rename, delete).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { fieldErrorOf, ApiError, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { HistoryLink } from "../../components/history";
import { Button, ConfirmDialog, ErrorBanner, Field, Loading, Notice, PageHeader, Toggle } from "../../components/ui";
import { keys, useScope } from "../../lib/session";
import "./admin.css";

type Environment = Schemas["Environment"];

// The schema's EnvironmentColor pattern and the default colour of
// docs/reference/identity.md, Projects and environments.
export const COLOR_RE = /^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6})$/;
const SLUG_RE = /^[a-z0-9-]{1,64}$/;
const DEFAULT_COLOR = "#6366f1";

// toPickerColor expands #rgb to #rrggbb, which <input type=color> needs.
export function toPickerColor(c: string): string {
  if (!COLOR_RE.test(c)) return DEFAULT_COLOR;
  if (c.length === 4) return "#" + [...c.slice(1)].map((x) => x + x).join("").toLowerCase();
  return c.toLowerCase();
}

export function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
}

export default function EnvSettings() {
  const api = useApi();
  const qc = useQueryClient();
  const { projectId, project } = useScope();
  const envKey = ["environments", projectId] as const;
  const envs = useQuery({
    queryKey: envKey,
    queryFn: () =>
      unwrap(api.GET("/api/projects/{project_id}/environments", { params: { path: { project_id: projectId } } })),
    enabled: Boolean(projectId),
  });
  const [status, setStatus] = useState("");
  const changed = (msg: string) => {
    setStatus(msg);
    void qc.invalidateQueries({ queryKey: envKey });
    void qc.invalidateQueries({ queryKey: keys.projects });
  };

  const list = [...(envs.data ?? [])].sort((a, b) => Number(b.is_default) - Number(a.is_default));

  return (
    <div className="admin-page">
      <PageHeader title="Project settings">
        Environments of {project?.name ?? "this project"}, their approval policy, and the project itself.
      </PageHeader>
      {status && <Notice kind="success">{status}</Notice>}

      <section className="admin-section" aria-labelledby="envs-heading">
        <h2 id="envs-heading">Environments</h2>
        {envs.isPending && projectId ? (
          <Loading />
        ) : envs.error ? (
          <ErrorBanner action="change this project's environments" error={envs.error} />
        ) : (
          <div className="env-cards">
            {list.map((env) => (
              <EnvCard key={env.id} env={env} projectId={projectId} onlyOne={list.length === 1} onChanged={changed} />
            ))}
          </div>
        )}
      </section>

      <NewEnvironment projectId={projectId} onCreated={(e) => changed(`Created ${e.name}.`)} />

      <ProjectSection projectId={projectId} name={project?.name ?? ""} onRenamed={(n) => changed(`Renamed the project to ${n}.`)} />
    </div>
  );
}

function ColorInput({
  value,
  onChange,
  error,
  envName,
}: {
  value: string;
  onChange: (v: string) => void;
  error?: string;
  envName: string;
}) {
  return (
    <Field label="Colour" hint="Hex, #rgb or #rrggbb" error={error}>
      {(p) => (
        <div className="color-row">
          <input
            type="color"
            aria-label={`Colour picker for ${envName}`}
            value={toPickerColor(value)}
            onChange={(e) => onChange(e.target.value)}
          />
          <input {...p} type="text" value={value} onChange={(e) => onChange(e.target.value.trim())} spellCheck={false} />
        </div>
      )}
    </Field>
  );
}

function EnvCard({
  env,
  projectId,
  onlyOne,
  onChanged,
}: {
  env: Environment;
  projectId: string;
  onlyOne: boolean;
  onChanged: (msg: string) => void;
}) {
  const api = useApi();
  const path = { project_id: projectId, env_id: env.id };
  const [name, setName] = useState(env.name);
  const [color, setColor] = useState(env.color);
  const [local, setLocal] = useState<{ name?: string; color?: string }>({});
  const [confirmDelete, setConfirmDelete] = useState(false);

  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api.PATCH("/api/projects/{project_id}/environments/{env_id}", {
          params: { path },
          body: { ...(name.trim() !== env.name ? { name: name.trim() } : {}), ...(color !== env.color ? { color } : {}) },
        }),
      ),
    onSuccess: (e) => onChanged(`Saved ${e.name}.`),
  });
  const approval = useMutation({
    mutationFn: (on: boolean) =>
      unwrap(
        api.POST("/api/projects/{project_id}/environments/{env_id}/require-approval", {
          params: { path },
          body: { require_approval: on },
        }),
      ),
    onSuccess: (e) =>
      onChanged(e.require_approval ? `${e.name} now requires approval for flag changes.` : `${e.name} no longer requires approval.`),
  });
  const makeDefault = useMutation({
    mutationFn: () => unwrap(api.POST("/api/projects/{project_id}/environments/{env_id}/default", { params: { path } })),
    onSuccess: (e) => onChanged(`${e.name} is now the default environment.`),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/projects/{project_id}/environments/{env_id}", { params: { path } })),
    onSuccess: () => {
      setConfirmDelete(false);
      onChanged(`Deleted ${env.name}.`);
    },
  });

  const dirty = name.trim() !== env.name || color !== env.color;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errs: typeof local = {};
    if (!name.trim()) errs.name = "Enter a name.";
    else if (name.length > 100) errs.name = "At most 100 characters.";
    if (!COLOR_RE.test(color)) errs.color = "Use a hex colour like #1f9d55 or #f00.";
    setLocal(errs);
    if (!errs.name && !errs.color && dirty) save.mutate();
  };
  const headingId = `env-${env.id}`;

  return (
    <article className="card env-card" aria-labelledby={headingId}>
      <div className="env-card-head">
        <h3 id={headingId}>
          <span className="env-dot" style={{ background: env.color }} aria-hidden="true" />
          {env.name}
        </h3>
        <div className="row">
          {env.is_default && <span className="pill pill-success">Default</span>}
          <code className="muted" title="Slug">
            {env.slug}
          </code>
          <HistoryLink type="environment" id={env.id} projectId={projectId} of={env.name} />
        </div>
      </div>
      <div className="switch-row">
        <Toggle
          label={`Require approval in ${env.name}`}
          checked={env.require_approval}
          disabled={approval.isPending}
          onChange={(on) => approval.mutate(on)}
        />
        <span>
          Require approval
          <span className="field-hint" style={{ display: "block" }}>
            Flag changes become change requests; segment writes are refused.
          </span>
        </span>
      </div>
      <ErrorBanner action="change this project's environments" error={approval.error} />
      <form onSubmit={submit} noValidate className="form-stack">
        <Field label="Name" error={local.name ?? fieldErrorOf(save.error, "name")}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <ColorInput value={color} onChange={setColor} error={local.color ?? fieldErrorOf(save.error, "color")} envName={env.name} />
        {save.error && !fieldErrorOf(save.error, "name") && !fieldErrorOf(save.error, "color") && (
          <ErrorBanner action="change this project's environments" error={save.error} />
        )}
        <div className="row">
          <Button type="submit" variant="primary" className="btn-small" busy={save.isPending} disabled={!dirty}>
            Save
          </Button>
          {!env.is_default && (
            <Button className="btn-small" busy={makeDefault.isPending} onClick={() => makeDefault.mutate()}>
              Make default
            </Button>
          )}
          <Button
            variant="danger"
            className="btn-small"
            aria-label={`Delete ${env.name}`}
            disabled={env.is_default || onlyOne}
            title={env.is_default ? "The default environment cannot be deleted" : onlyOne ? "The last environment cannot be deleted" : undefined}
            onClick={() => {
              remove.reset();
              setConfirmDelete(true);
            }}
          >
            Delete
          </Button>
        </div>
        <ErrorBanner action="change this project's environments" error={makeDefault.error} />
      </form>
      {confirmDelete && (
        <ConfirmDialog
          action="change this project's environments"
          title={`Delete ${env.name}?`}
          confirmLabel="Delete environment"
          busy={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate()}
          onClose={() => setConfirmDelete(false)}
        >
          <p>All of its flags, segments, SDK keys, impressions and history are deleted. SDKs using its keys stop working.</p>
        </ConfirmDialog>
      )}
    </article>
  );
}

function NewEnvironment({ projectId, onCreated }: { projectId: string; onCreated: (e: Environment) => void }) {
  const api = useApi();
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugEdited, setSlugEdited] = useState(false);
  const [color, setColor] = useState(DEFAULT_COLOR);
  const [local, setLocal] = useState<{ name?: string; slug?: string; color?: string }>({});
  const effectiveSlug = slugEdited ? slug : slugify(name);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/projects/{project_id}/environments", {
          params: { path: { project_id: projectId } },
          body: { name: name.trim(), slug: effectiveSlug, color },
        }),
      ),
    onSuccess: (e) => {
      setName("");
      setSlug("");
      setSlugEdited(false);
      setColor(DEFAULT_COLOR);
      onCreated(e);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errs: typeof local = {};
    if (!name.trim()) errs.name = "Enter a name.";
    if (!SLUG_RE.test(effectiveSlug)) errs.slug = "Lowercase letters, digits and hyphens, at most 64.";
    if (!COLOR_RE.test(color)) errs.color = "Use a hex colour like #1f9d55 or #f00.";
    setLocal(errs);
    if (Object.keys(errs).length === 0) create.mutate();
  };
  const err = create.error;
  const slugErr =
    local.slug ?? fieldErrorOf(err, "slug") ?? (err instanceof ApiError && err.status === 409 ? err.message : undefined);
  return (
    <section className="card admin-section" aria-labelledby="new-env">
      <h2 id="new-env">New environment</h2>
      <form className="admin-form" onSubmit={submit} noValidate>
        <Field label="Environment name" error={local.name ?? fieldErrorOf(err, "name")}>
          {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. QA" />}
        </Field>
        <Field label="Slug" hint="Unique in the project; cannot change later" error={slugErr}>
          {(p) => (
            <input
              {...p}
              value={effectiveSlug}
              onChange={(e) => {
                setSlugEdited(true);
                setSlug(e.target.value);
              }}
            />
          )}
        </Field>
        <ColorInput value={color} onChange={setColor} error={local.color ?? fieldErrorOf(err, "color")} envName="the new environment" />
        <Button type="submit" variant="primary" busy={create.isPending}>
          Create environment
        </Button>
      </form>
      {err && !fieldErrorOf(err, "name") && !slugErr && !fieldErrorOf(err, "color") && (
        <div style={{ marginTop: 12 }}>
          <ErrorBanner action="change this project's environments" error={err} />
        </div>
      )}
    </section>
  );
}

function ProjectSection({ projectId, name, onRenamed }: { projectId: string; name: string; onRenamed: (n: string) => void }) {
  const api = useApi();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [draft, setDraft] = useState<string | null>(null);
  const value = draft ?? name;
  const [localErr, setLocalErr] = useState<string>();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const rename = useMutation({
    mutationFn: () =>
      unwrap(api.PATCH("/api/projects/{project_id}", { params: { path: { project_id: projectId } }, body: { name: value.trim() } })),
    onSuccess: (p) => {
      setDraft(null);
      onRenamed(p.name);
    },
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/projects/{project_id}", { params: { path: { project_id: projectId } } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: keys.projects });
      void navigate("/");
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const err = !value.trim() ? "Enter a name." : value.length > 100 ? "At most 100 characters." : undefined;
    setLocalErr(err);
    if (!err && value.trim() !== name) rename.mutate();
  };
  return (
    <section className="card admin-section danger-zone" aria-labelledby="project-heading">
      <h2 id="project-heading">Project</h2>
      <form className="admin-form" onSubmit={submit} noValidate>
        <Field label="Project name" error={localErr ?? fieldErrorOf(rename.error, "name")}>
          {(p) => <input {...p} value={value} onChange={(e) => setDraft(e.target.value)} />}
        </Field>
        <Button type="submit" variant="primary" busy={rename.isPending} disabled={value.trim() === name}>
          Rename project
        </Button>
      </form>
      {rename.error && !fieldErrorOf(rename.error, "name") && <ErrorBanner action="change this project's environments" error={rename.error} />}
      <hr />
      <p>Deleting the project deletes its environments, flags, SDK keys and impressions. It cannot be undone.</p>
      <Button
        variant="danger"
        onClick={() => {
          remove.reset();
          setConfirmDelete(true);
        }}
      >
        Delete project
      </Button>
      {confirmDelete && (
        <ConfirmDialog
          action="delete this project"
          title={`Delete ${name}?`}
          confirmLabel="Delete this project"
          busy={remove.isPending}
          error={remove.error}
          requireText={name}
          onConfirm={() => remove.mutate()}
          onClose={() => setConfirmDelete(false)}
        >
          <p>Every environment, flag, segment, SDK key and impression of {name} is deleted. SDKs using its keys stop working.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
