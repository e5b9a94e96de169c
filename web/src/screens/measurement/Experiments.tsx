// Experiments: the environment's A/B experiments — list, create, edit
// (including status), delete. Each row opens its results.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState, type FormEvent } from "react";
import { Link } from "react-router";
import { ApiError, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Modal, Notice, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { keyFromName } from "../../lib/targeting";
import { fieldErr, measurementKeys, StatusPill, useEventKeys, useFlags } from "./common";
import { flagVariantValues, keyProblem } from "./format";
import "./measurement.css";

type Experiment = Schemas["Experiment"];
type Status = Schemas["ExperimentStatus"];
const STATUSES: Status[] = ["running", "paused", "completed"];

export function useExperiments(envId: string) {
  const api = useApi();
  return useQuery({
    queryKey: measurementKeys.experiments(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/experiments", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
  });
}

export default function Experiments() {
  const { projectId, envId, env } = useScope();
  const list = useExperiments(envId);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Experiment | null>(null);
  const [deleting, setDeleting] = useState<Experiment | null>(null);
  const [notice, setNotice] = useState("");
  const [query, setQuery] = useState("");
  const [status, setStatus] = useState<"" | Status>("");
  // Stable close handlers: Modal re-runs its focus effect when onClose changes.
  const closeCreate = useCallback(() => setCreating(false), []);
  const closeEdit = useCallback(() => setEditing(null), []);
  const closeDelete = useCallback(() => setDeleting(null), []);

  const rows = useMemo(() => {
    const q = query.trim().toLowerCase();
    return (list.data ?? []).filter(
      (e) =>
        (!status || e.status === status) &&
        (!q || [e.name, e.key, e.flag_key, e.goal_event_key].some((s) => s.toLowerCase().includes(q))),
    );
  }, [list.data, query, status]);

  return (
    <div className="measurement">
      <PageHeader
        title="Experiments"
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New experiment
          </Button>
        }
      >
        A/B tests on a flag's variants{env ? ` in ${env.name}` : ""}: users are counted from their first exposure and
        convert when they fire the goal event afterwards.
      </PageHeader>
      <div aria-live="polite">{notice && <Notice kind="success">{notice}</Notice>}</div>
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorBanner error={list.error} action="view experiments in this environment" />
      ) : list.data.length === 0 ? (
        <Empty title="No experiments yet">
          <p>Create one to compare a flag's variants on a goal event your SDKs report.</p>
          <Button variant="primary" onClick={() => setCreating(true)}>
            New experiment
          </Button>
        </Empty>
      ) : (
        <>
          <div className="row filters" role="search">
            <label>
              <span className="sr-only">Search experiments</span>
              <input
                type="search"
                placeholder="Search name, key, flag, goal…"
                value={query}
                onChange={(e) => setQuery(e.target.value)}
              />
            </label>
            <label className="row">
              Status
              <select value={status} onChange={(e) => setStatus(e.target.value as "" | Status)}>
                <option value="">All</option>
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
            <span className="muted" role="status">
              {rows.length} of {list.data.length}
            </span>
          </div>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Experiment</th>
                  <th scope="col">Flag</th>
                  <th scope="col">Goal event</th>
                  <th scope="col">Control</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr key={e.id}>
                    <th scope="row">
                      <Link to={envPath(projectId, envId, `experiments/${encodeURIComponent(e.key)}`)}>{e.name}</Link>
                      <div>
                        <code className="muted">{e.key}</code>
                      </div>
                    </th>
                    <td>
                      <Link to={envPath(projectId, envId, `flags/${encodeURIComponent(e.flag_key)}`)}>
                        <code>{e.flag_key}</code>
                      </Link>
                    </td>
                    <td>
                      <code>{e.goal_event_key}</code>
                    </td>
                    <td>{e.control_variant ? <code>{e.control_variant}</code> : <span className="muted">most exposed</span>}</td>
                    <td>
                      <StatusPill status={e.status} />
                    </td>
                    <td>
                      <Time value={e.created_at} />
                    </td>
                    <td className="actions">
                      <Button className="btn-small" onClick={() => setEditing(e)} aria-label={`Edit ${e.name}`}>
                        Edit
                      </Button>
                      <Button
                        className="btn-small"
                        variant="danger"
                        onClick={() => setDeleting(e)}
                        aria-label={`Delete ${e.name}`}
                      >
                        Delete
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      {creating && (
        <Modal title="New experiment" onClose={closeCreate}>
          <ExperimentForm
            envId={envId}
            onDone={(e) => {
              setCreating(false);
              setNotice(`Created experiment “${e.name}”. It is running.`);
            }}
          />
        </Modal>
      )}
      {editing && (
        <Modal title={`Edit ${editing.name}`} onClose={closeEdit}>
          <ExperimentForm
            envId={envId}
            experiment={editing}
            onDone={(e) => {
              setEditing(null);
              setNotice(`Saved experiment “${e.name}”.`);
            }}
          />
        </Modal>
      )}
      {deleting && (
        <DeleteExperiment
          envId={envId}
          experiment={deleting}
          onClose={closeDelete}
          onDeleted={() => {
            setNotice(`Deleted experiment “${deleting.name}”.`);
            setDeleting(null);
          }}
        />
      )}
    </div>
  );
}

function DeleteExperiment({
  envId,
  experiment,
  onClose,
  onDeleted,
}: {
  envId: string;
  experiment: Experiment;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const del = useMutation({
    mutationFn: () =>
      unwrap(
        api.DELETE("/api/environments/{env_id}/experiments/{key}", {
          params: { path: { env_id: envId, key: experiment.key } },
        }),
      ),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: measurementKeys.experiments(envId) });
      onDeleted();
    },
  });
  return (
    <ConfirmDialog
      title="Delete experiment?"
      confirmLabel="Delete experiment"
      busy={del.isPending}
      error={del.error}
      action="delete experiments in this environment"
      onConfirm={() => del.mutate()}
      onClose={onClose}
    >
      Delete <strong>{experiment.name}</strong> (<code>{experiment.key}</code>)? The impressions and goal events stay;
      only the experiment and its results view go.
    </ConfirmDialog>
  );
}

type FormState = {
  name: string;
  key: string;
  flag_key: string;
  goal_event_key: string;
  control_variant: string;
  description: string;
  status: Status;
};

const FIELDS = ["name", "key", "flag_key", "goal_event_key", "control_variant", "description", "status"];

// buildPatch sends only what changed; a cleared optional text becomes null.
export function buildPatch(before: Experiment, form: FormState): Schemas["ExperimentPatch"] {
  const patch: Schemas["ExperimentPatch"] = {};
  if (form.name.trim() !== before.name) patch.name = form.name.trim();
  if (form.status !== before.status) patch.status = form.status;
  if (form.goal_event_key.trim() !== before.goal_event_key) patch.goal_event_key = form.goal_event_key.trim();
  const control = form.control_variant.trim() || null;
  if (control !== (before.control_variant ?? null)) patch.control_variant = control;
  const description = form.description.trim() || null;
  if (description !== (before.description ?? null)) patch.description = description;
  return patch;
}

export function ExperimentForm({
  envId,
  experiment,
  onDone,
}: {
  envId: string;
  experiment?: Experiment;
  onDone: (e: Experiment) => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const flags = useFlags(envId);
  const events = useEventKeys(envId);
  const editing = Boolean(experiment);
  const [form, setForm] = useState<FormState>({
    name: experiment?.name ?? "",
    key: experiment?.key ?? "",
    flag_key: experiment?.flag_key ?? "",
    goal_event_key: experiment?.goal_event_key ?? "",
    control_variant: experiment?.control_variant ?? "",
    description: experiment?.description ?? "",
    status: experiment?.status ?? "running",
  });
  const [keyTouched, setKeyTouched] = useState(editing);
  const [submitted, setSubmitted] = useState(false);
  const set = (patch: Partial<FormState>) => setForm((f) => ({ ...f, ...patch }));

  const local: Record<string, string | undefined> = {
    name: form.name.trim() ? undefined : "Name is required.",
    key: editing ? undefined : keyProblem("Key", form.key.trim()),
    flag_key: editing ? undefined : keyProblem("Flag key", form.flag_key.trim()),
    goal_event_key: keyProblem("Goal event key", form.goal_event_key.trim()),
  };

  const save = useMutation({
    mutationFn: async (): Promise<Experiment> => {
      if (experiment) {
        return unwrap(
          api.PATCH("/api/environments/{env_id}/experiments/{key}", {
            params: { path: { env_id: envId, key: experiment.key } },
            body: buildPatch(experiment, form),
          }),
        );
      }
      const body: Schemas["ExperimentInput"] = {
        name: form.name.trim(),
        key: form.key.trim(),
        flag_key: form.flag_key.trim(),
        goal_event_key: form.goal_event_key.trim(),
      };
      if (form.control_variant.trim()) body.control_variant = form.control_variant.trim();
      if (form.description.trim()) body.description = form.description.trim();
      return unwrap(api.POST("/api/environments/{env_id}/experiments", { params: { path: { env_id: envId } }, body }));
    },
    onSuccess: async (saved) => {
      await qc.invalidateQueries({ queryKey: measurementKeys.experiments(envId) });
      onDone(saved);
    },
  });

  const err = (field: string) => (submitted ? local[field] : undefined) ?? fieldErr(save.error, field);
  const flag = flags.data?.find((f) => f.key === form.flag_key.trim());
  const variantChoices = flagVariantValues(flag);
  const ids = { flags: `${envId}-exp-flags`, events: `${envId}-exp-events`, variants: `${envId}-exp-variants` };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    if (Object.values(local).some(Boolean)) return;
    if (experiment && Object.keys(buildPatch(experiment, form)).length === 0) {
      onDone(experiment);
      return;
    }
    save.mutate();
  };

  const conflict = save.error instanceof ApiError && save.error.status === 409;
  return (
    <form onSubmit={submit} noValidate className="experiment-form">
      {!conflict && <ErrorBanner error={save.error} action={`${editing ? "edit" : "create"} experiments in this environment`} shownFields={FIELDS} />}
      <Field label="Name" error={err("name")}>
        {(p) => (
          <input
            {...p}
            value={form.name}
            maxLength={200}
            onChange={(e) => set({ name: e.target.value, ...(keyTouched ? {} : { key: keyFromName(e.target.value) }) })}
          />
        )}
      </Field>
      {editing ? (
        <p className="muted">
          Key <code>{form.key}</code> · flag <code>{form.flag_key}</code> (fixed once created)
        </p>
      ) : (
        <div className="grid-2">
          <Field label="Key" hint="Letters, digits, _ and -; unique in this environment." error={err("key")}>
            {(p) => (
              <input
                {...p}
                value={form.key}
                maxLength={100}
                onChange={(e) => {
                  setKeyTouched(true);
                  set({ key: e.target.value });
                }}
              />
            )}
          </Field>
          <Field label="Flag" hint="The flag whose variants are compared." error={err("flag_key")}>
            {(p) => (
              <>
                <input {...p} list={ids.flags} value={form.flag_key} maxLength={100} onChange={(e) => set({ flag_key: e.target.value })} />
                <datalist id={ids.flags}>
                  {flags.data?.filter((f) => !f.archived_at).map((f) => <option key={f.key} value={f.key} />)}
                </datalist>
              </>
            )}
          </Field>
        </div>
      )}
      <div className="grid-2">
        <Field label="Goal event key" hint="The event your SDKs track on conversion." error={err("goal_event_key")}>
          {(p) => (
            <>
              <input {...p} list={ids.events} value={form.goal_event_key} maxLength={100} onChange={(e) => set({ goal_event_key: e.target.value })} />
              <datalist id={ids.events}>
                {events.data?.map((k) => <option key={k.event_key} value={k.event_key} />)}
              </datalist>
            </>
          )}
        </Field>
        <Field
          label="Control variant (optional)"
          hint={variantChoices.length ? `Flag serves: ${variantChoices.join(", ")}` : "Empty: the most-exposed variant is the baseline."}
          error={err("control_variant")}
        >
          {(p) => (
            <>
              <input {...p} list={ids.variants} value={form.control_variant} onChange={(e) => set({ control_variant: e.target.value })} />
              <datalist id={ids.variants}>
                {variantChoices.map((v) => <option key={v} value={v} />)}
              </datalist>
            </>
          )}
        </Field>
      </div>
      {editing && (
        <Field label="Status" hint="Completed experiments keep collecting data but are shown as finished." error={err("status")}>
          {(p) => (
            <select {...p} value={form.status} onChange={(e) => set({ status: e.target.value as Status })}>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      <Field label="Description (optional)" error={err("description")}>
        {(p) => <textarea {...p} value={form.description} rows={3} onChange={(e) => set({ description: e.target.value })} />}
      </Field>
      <div className="row">
        <Button type="submit" variant="primary" busy={save.isPending}>
          {editing ? "Save changes" : "Create experiment"}
        </Button>
      </div>
    </form>
  );
}
