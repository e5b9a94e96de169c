// One experiment and its results: per-variant exposure and conversion,
// uplift, z and p against the control, a significance badge, and the
// conversion chart with 95% intervals. Refreshes itself every 30 s.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { ApiError, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { ConversionChart } from "../../components/charts";
import { Button, ConfirmDialog, Empty, ErrorBanner, Loading, Modal, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { measurementKeys, StatusPill } from "./common";
import { ExperimentForm } from "./Experiments";
import { formatCount, formatPercent, formatPValue, formatUplift, formatZ, share } from "./format";
import "./measurement.css";

export const RESULTS_REFRESH_MS = 30_000;

type Result = Schemas["ExperimentResult"];
type Variant = Schemas["ExperimentVariantResult"];

// verdict summarises the result in one sentence.
export function verdict(result: Result): string {
  const control = result.variants.find((v) => v.is_control);
  if (result.variants.length === 0) return "No exposures yet.";
  if (!control) return "No control variant in the data yet.";
  const winners = result.variants.filter((v) => !v.is_control && v.significant);
  if (winners.length === 0) {
    return `No variant differs significantly from the control “${control.variant}” at 95%.`;
  }
  const best = [...winners].sort((a, b) => (b.uplift ?? 0) - (a.uplift ?? 0))[0]!;
  const dir = (best.uplift ?? best.conversion_rate - control.conversion_rate) >= 0 ? "better" : "worse";
  const size = best.uplift == null ? "" : ` ${formatUplift(Math.abs(best.uplift)).replace("+", "")}`;
  return `“${best.variant}” converts${size} ${dir} than the control “${control.variant}” (p = ${formatPValue(best.p_value)}).`;
}

export default function ExperimentDetail() {
  const { key = "" } = useParams();
  const { projectId, envId } = useScope();
  const api = useApi();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const closeEdit = useCallback(() => setEditing(false), []); // stable: Modal refocuses when onClose changes
  const results = useQuery({
    queryKey: measurementKeys.results(envId, key),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/experiments/{key}/results", {
          params: { path: { env_id: envId, key } },
        }),
      ),
    enabled: Boolean(envId && key),
    refetchInterval: RESULTS_REFRESH_MS,
  });
  const back = envPath(projectId, envId, "experiments");

  if (results.isPending) return <Loading />;
  if (results.error) {
    const notFound = results.error instanceof ApiError && results.error.status === 404;
    return (
      <div className="measurement">
        <PageHeader title={key} />
        {notFound ? (
          <Empty title="Experiment not found">
            <p>
              There is no experiment <code>{key}</code> in this environment. <Link to={back}>All experiments</Link>
            </p>
          </Empty>
        ) : (
          <ErrorBanner error={results.error} action="view this experiment in this environment" />
        )}
      </div>
    );
  }
  const r = results.data;
  const e = r.experiment;
  return (
    <div className="measurement">
      <p>
        <Link to={back}>← Experiments</Link>
      </p>
      <PageHeader
        title={
          <>
            {e.name} <StatusPill status={e.status} />
          </>
        }
        actions={
          <>
            <Button onClick={() => void results.refetch()} busy={results.isFetching}>
              Refresh
            </Button>
            <StatusActions envId={envId} experiment={e} />
            <Button onClick={() => setEditing(true)}>Edit</Button>
            <DeleteButton envId={envId} experiment={e} onDeleted={() => navigate(back)} />
          </>
        }
      >
        <code>{e.key}</code> · flag{" "}
        <Link to={envPath(projectId, envId, `flags/${encodeURIComponent(e.flag_key)}`)}>
          <code>{e.flag_key}</code>
        </Link>{" "}
        · goal <code>{e.goal_event_key}</code> · started <Time value={e.created_at} />
        {e.description && <div>{e.description}</div>}
      </PageHeader>
      <p className="muted" role="status" aria-live="polite">
        Updated {new Date(results.dataUpdatedAt).toLocaleTimeString()} · refreshes every 30 s
      </p>

      <dl className="stats">
        <div>
          <dt>Users exposed</dt>
          <dd>{formatCount(r.total_exposed)}</dd>
        </div>
        <div>
          <dt>Converted</dt>
          <dd>{formatCount(r.total_converted)}</dd>
        </div>
        <div>
          <dt>Overall rate</dt>
          <dd>{formatPercent(share(r.total_converted, r.total_exposed))}</dd>
        </div>
        <div>
          <dt>Control</dt>
          <dd>{r.control_variant ?? "—"}</dd>
        </div>
      </dl>

      {r.variants.length === 0 ? (
        <Empty title="No exposures yet">
          <p>
            Results appear once SDKs report impressions of <code>{e.flag_key}</code> with a user key, and goal events{" "}
            <code>{e.goal_event_key}</code> for the same users. Anonymous evaluations are not counted.
          </p>
        </Empty>
      ) : (
        <>
          <p className="verdict">
            <strong>{verdict(r)}</strong>
          </p>
          <section aria-labelledby="results-h">
            <h2 id="results-h">Results by variant</h2>
            <ResultsTable variants={r.variants} />
            <p className="muted">
              Uplift is relative to the control’s conversion rate; z and p come from a two-sided, pooled two-proportion
              z-test. Significant means p &lt; 0.05. Users count from their first exposure and stay in the variant seen
              then.
            </p>
          </section>
          <section aria-labelledby="chart-h">
            <h2 id="chart-h">Conversion by variant</h2>
            <div className="card">
              <ConversionChart
                title={`Conversion rate by variant for ${e.name}`}
                bars={r.variants.map((v) => ({
                  label: v.variant,
                  converted: v.converted,
                  exposed: v.exposed,
                  isControl: v.is_control,
                }))}
              />
            </div>
          </section>
        </>
      )}
      {editing && (
        <Modal title={`Edit ${e.name}`} onClose={closeEdit}>
          <ExperimentForm
            envId={envId}
            experiment={e}
            onDone={() => {
              setEditing(false);
              void results.refetch();
            }}
          />
        </Modal>
      )}
    </div>
  );
}

export function ResultsTable({ variants }: { variants: Variant[] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col" className="num">
              Exposed
            </th>
            <th scope="col" className="num">
              Converted
            </th>
            <th scope="col" className="num">
              Conversion
            </th>
            <th scope="col" className="num">
              Uplift
            </th>
            <th scope="col" className="num">
              z
            </th>
            <th scope="col" className="num">
              p-value
            </th>
            <th scope="col">Significance</th>
          </tr>
        </thead>
        <tbody>
          {variants.map((v) => (
            <tr key={v.variant} className={v.is_control ? "is-control" : undefined}>
              <th scope="row">
                <code>{v.variant}</code> {v.is_control && <span className="tag">control</span>}
              </th>
              <td className="num">{formatCount(v.exposed)}</td>
              <td className="num">{formatCount(v.converted)}</td>
              <td className="num">{formatPercent(v.conversion_rate, 2)}</td>
              <td className="num">{v.is_control ? "—" : formatUplift(v.uplift)}</td>
              <td className="num">{formatZ(v.z_score)}</td>
              <td className="num">{formatPValue(v.p_value)}</td>
              <td>
                {v.is_control ? (
                  <span className="muted">baseline</span>
                ) : v.significant ? (
                  <span className="pill pill-success">Significant at 95%</span>
                ) : (
                  <span className="pill">Not significant</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function useExperimentMutations(envId: string, key: string) {
  const qc = useQueryClient();
  return async () => {
    await Promise.all([
      qc.invalidateQueries({ queryKey: measurementKeys.experiments(envId), exact: true }),
      qc.invalidateQueries({ queryKey: measurementKeys.results(envId, key) }),
    ]);
  };
}

function StatusActions({ envId, experiment }: { envId: string; experiment: Schemas["Experiment"] }) {
  const api = useApi();
  const refresh = useExperimentMutations(envId, experiment.key);
  const patch = useMutation({
    mutationFn: (status: Schemas["ExperimentStatus"]) =>
      unwrap(
        api.PATCH("/api/environments/{env_id}/experiments/{key}", {
          params: { path: { env_id: envId, key: experiment.key } },
          body: { status },
        }),
      ),
    onSuccess: refresh,
  });
  const actions: { status: Schemas["ExperimentStatus"]; label: string }[] =
    experiment.status === "running"
      ? [
          { status: "paused", label: "Pause" },
          { status: "completed", label: "Mark completed" },
        ]
      : experiment.status === "paused"
        ? [
            { status: "running", label: "Resume" },
            { status: "completed", label: "Mark completed" },
          ]
        : [{ status: "running", label: "Reopen" }];
  return (
    <>
      {actions.map((a) => (
        <Button key={a.status} busy={patch.isPending && patch.variables === a.status} disabled={patch.isPending} onClick={() => patch.mutate(a.status)}>
          {a.label}
        </Button>
      ))}
      {patch.error ? (
        <div className="status-error">
          <ErrorBanner error={patch.error} action="change experiments in this environment" />
        </div>
      ) : null}
    </>
  );
}

function DeleteButton({
  envId,
  experiment,
  onDeleted,
}: {
  envId: string;
  experiment: Schemas["Experiment"];
  onDeleted: () => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const [confirm, setConfirm] = useState(false);
  const close = useCallback(() => setConfirm(false), []);
  const del = useMutation({
    mutationFn: () =>
      unwrap(
        api.DELETE("/api/environments/{env_id}/experiments/{key}", {
          params: { path: { env_id: envId, key: experiment.key } },
        }),
      ),
    onSuccess: async () => {
      qc.removeQueries({ queryKey: measurementKeys.results(envId, experiment.key) });
      await qc.invalidateQueries({ queryKey: measurementKeys.experiments(envId), exact: true });
      onDeleted();
    },
  });
  return (
    <>
      <Button variant="danger" onClick={() => setConfirm(true)}>
        Delete
      </Button>
      {confirm && (
        <ConfirmDialog
          title="Delete experiment?"
          confirmLabel="Delete experiment"
          busy={del.isPending}
          error={del.error}
          action="delete experiments in this environment"
          onConfirm={() => del.mutate()}
          onClose={close}
        >
          Delete <strong>{experiment.name}</strong>? The impressions and goal events stay.
        </ConfirmDialog>
      )}
    </>
  );
}
