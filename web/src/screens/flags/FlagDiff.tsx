import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { ApiError, unwrap, type Schemas } from "../../api/client";
import { SideBySide } from "../../components/diff";
import { Button, ConfirmDialog, EnvBadge, Empty, ErrorBanner, Loading, Notice, PageHeader } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { useApi } from "../../api/context";
import { defaultTarget } from "./flagform";
import "./flags.css";

type Entry = Schemas["FlagDiffEntry"];
type EnvSummary = Schemas["EnvironmentSummary"];

const IGNORED = ["environment_id", "version", "created_at", "updated_at"];

const STATUS_LABEL: Record<Entry["status"], string> = {
  only_in_from: "only in source",
  only_in_to: "only in target",
  different: "different",
  same: "identical",
};
const STATUS_PILL: Record<Entry["status"], string> = {
  only_in_from: "pill pill-warning",
  only_in_to: "pill",
  different: "pill pill-danger",
  same: "pill pill-success",
};

export default function FlagDiff() {
  const api = useApi();
  const queryClient = useQueryClient();
  const { projectId, envId, project } = useScope();
  const envs = project?.environments ?? [];
  const [params, setParams] = useSearchParams();
  const from = params.get("from") || envId;
  const to = params.get("to") || defaultTarget(envs, from);
  const hideSame = params.get("all") !== "1";
  const fromId = useId();
  const toId = useId();
  const [open, setOpen] = useState<Set<string>>(new Set());
  const [confirm, setConfirm] = useState<Entry | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const setParam = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };

  const diff = useQuery({
    queryKey: ["flag-diff", projectId, from, to],
    queryFn: () =>
      unwrap(api.GET("/api/projects/{project_id}/flags/diff", { params: { path: { project_id: projectId }, query: { from, to } } })),
    enabled: !!projectId && !!from && !!to && from !== to,
  });

  const promote = useMutation({
    mutationFn: (key: string) =>
      unwrap(
        api.POST("/api/environments/{env_id}/flags/{key}/promote", {
          params: { path: { env_id: from, key } },
          body: { target_env_id: to },
        }),
      ),
    onMutate: () => setDone(null),
    onSuccess: (flag) => {
      setDone(flag.key);
      void queryClient.invalidateQueries({ queryKey: ["flag-diff", projectId] });
      void queryClient.invalidateQueries({ queryKey: flagKeys.list(to), exact: true });
      void queryClient.invalidateQueries({ queryKey: flagKeys.one(to, flag.key) });
    },
    onSettled: () => setConfirm(null),
  });

  const envOf = (id: string) => envs.find((e) => e.id === id);
  const fromEnv = envOf(from);
  const toEnv = envOf(to);
  const name = (e?: EnvSummary) => e?.name ?? "?";
  const entries = diff.data ?? [];
  const counts = { only_in_from: 0, only_in_to: 0, different: 0, same: 0 };
  for (const e of entries) counts[e.status] += 1;
  const shown = hideSame ? entries.filter((e) => e.status !== "same") : entries;

  const toggleOpen = (key: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });

  const promoteError =
    promote.error instanceof ApiError && promote.error.status === 409 ? (
      <div className="banner banner-error" role="alert">
        <strong>{name(toEnv)} requires approval, so flags cannot be promoted into it.</strong> Edit the flag there instead: the
        change goes through a change request. <span className="muted">({promote.error.message})</span>
      </div>
    ) : (
      <ErrorBanner error={promote.error} action={`change flags in ${name(toEnv)}`} />
    );

  return (
    <div className="flag-diff">
      <PageHeader title="Compare & promote">
        See how flags differ between two environments and copy a flag's whole configuration from the source to the target.
      </PageHeader>

      {envs.length < 2 ? (
        project && (
          <Empty title="Only one environment">
            <p>Add another environment to the project to compare flags.</p>
          </Empty>
        )
      ) : (
        <>
          <div className="row diff-pickers">
            <div className="field">
              <label htmlFor={fromId}>Source environment</label>
              <select id={fromId} value={from} onChange={(e) => setParam("from", e.target.value)}>
                {envs.map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.name}
                  </option>
                ))}
              </select>
            </div>
            <Button
              className="swap"
              aria-label="Swap source and target"
              onClick={() => {
                const next = new URLSearchParams(params);
                next.set("from", to);
                next.set("to", from);
                setParams(next, { replace: true });
              }}
            >
              ⇄
            </Button>
            <div className="field">
              <label htmlFor={toId}>Target environment</label>
              <select id={toId} value={to} onChange={(e) => setParam("to", e.target.value)}>
                {envs.map((e) => (
                  <option key={e.id} value={e.id}>
                    {e.name}
                  </option>
                ))}
              </select>
            </div>
            <label className="check">
              <input type="checkbox" checked={hideSame} onChange={(e) => setParam("all", e.target.checked ? "" : "1")} />
              Hide identical
            </label>
          </div>

          {from === to && <Notice kind="warning">Choose two different environments.</Notice>}
          <ErrorBanner error={diff.error} action="compare these environments" />
          {promoteError}
          <div aria-live="polite">
            {done && (
              <Notice kind="success">
                Promoted <code>{done}</code> to {name(toEnv)}.{" "}
                <Link to={envPath(projectId, to, `flags/${encodeURIComponent(done)}`)}>Open it in {name(toEnv)}</Link>
              </Notice>
            )}
          </div>

          {diff.isLoading && <Loading label="Comparing…" />}
          {diff.data && (
            <>
              <p className="diff-summary" role="status">
                {counts.different} different · {counts.only_in_from} only in {name(fromEnv)} · {counts.only_in_to} only in{" "}
                {name(toEnv)} · {counts.same} identical
              </p>
              {shown.length === 0 ? (
                <Empty title={entries.length ? "Everything is identical" : "No flags in either environment"} />
              ) : (
                <div className="table-wrap">
                  <table className="diff-table">
                    <thead>
                      <tr>
                        <th scope="col">Flag</th>
                        <th scope="col">Status</th>
                        <th scope="col">Changed fields</th>
                        <th scope="col">Actions</th>
                      </tr>
                    </thead>
                    <tbody>
                      {shown.map((e) => {
                        const expanded = open.has(e.key);
                        const canPromote = e.from !== null && e.status !== "same";
                        return [
                          <tr key={e.key}>
                            <th scope="row">
                              <code>{e.key}</code>
                            </th>
                            <td>
                              <span className={STATUS_PILL[e.status]}>
                                {e.status === "only_in_from"
                                  ? `only in ${name(fromEnv)}`
                                  : e.status === "only_in_to"
                                    ? `only in ${name(toEnv)}`
                                    : STATUS_LABEL[e.status]}
                              </span>
                            </td>
                            <td>
                              {e.changed_fields.length ? (
                                e.changed_fields.map((f) => (
                                  <code className="tag" key={f}>
                                    {f}
                                  </code>
                                ))
                              ) : (
                                <span className="muted">—</span>
                              )}
                            </td>
                            <td className="row">
                              {e.status !== "same" && (
                                <Button
                                  className="btn-small"
                                  aria-expanded={expanded}
                                  aria-controls={`diff-${e.key}`}
                                  onClick={() => toggleOpen(e.key)}
                                >
                                  {expanded ? "Hide" : "Compare"}
                                  <span className="sr-only"> {e.key}</span>
                                </Button>
                              )}
                              {canPromote && (
                                <Button className="btn-small" variant="primary" onClick={() => setConfirm(e)}>
                                  Promote<span className="sr-only"> {e.key}</span> to {name(toEnv)}
                                </Button>
                              )}
                            </td>
                          </tr>,
                          expanded && (
                            <tr key={e.key + "-detail"} id={`diff-${e.key}`} className="diff-detail">
                              <td colSpan={4}>
                                <SideBySide
                                  leftTitle={fromEnv ? <EnvBadge name={fromEnv.name} color={fromEnv.color} /> : "Source"}
                                  rightTitle={toEnv ? <EnvBadge name={toEnv.name} color={toEnv.color} /> : "Target"}
                                  left={e.from as Record<string, unknown> | null}
                                  right={e.to as Record<string, unknown> | null}
                                  ignore={IGNORED}
                                  onlyChanged={e.status === "different"}
                                />
                              </td>
                            </tr>
                          ),
                        ];
                      })}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          )}
        </>
      )}

      {confirm && (
        <ConfirmDialog
          title={`Promote ${confirm.key}?`}
          confirmLabel={`Promote to ${name(toEnv)}`}
          variant="primary"
          busy={promote.isPending}
          onConfirm={() => promote.mutate(confirm.key)}
          onClose={() => setConfirm(null)}
        >
          <p>
            Copy the whole configuration of <code>{confirm.key}</code> from <strong>{name(fromEnv)}</strong> to{" "}
            <strong>{name(toEnv)}</strong>
            {confirm.status === "only_in_from"
              ? ". The flag does not exist there yet and will be created."
              : `, replacing what ${name(toEnv)} has now (${confirm.changed_fields.join(", ") || "no field"} differ${confirm.changed_fields.length === 1 ? "s" : ""}).`}{" "}
            SDKs in {name(toEnv)} receive the change at once.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
