// Change requests: the approval queue of one environment. Reviewers approve or
// reject (with a reason); requesters (or workspace admins) cancel their own.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { SideBySide } from "../../components/diff";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Modal, Notice, PageHeader, Time } from "../../components/ui";
import { envPath, isAdmin, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { asRecord, patchSummary, pickFields } from "./shared";
import "./governance.css";

type ChangeRequest = Schemas["ChangeRequest"];
type Status = Schemas["ChangeRequestStatus"];
const STATUSES: Status[] = ["pending", "approved", "rejected", "cancelled"];

export const crKeys = {
  all: (envId: string) => ["change-requests", envId] as const,
  list: (envId: string, status: string) => ["change-requests", envId, status] as const,
};

const statusPill: Record<Status, string> = {
  pending: "pill-warning",
  approved: "pill-success",
  rejected: "pill-danger",
  cancelled: "",
};

export default function ChangeRequests() {
  const api = useApi();
  const { projectId, envId, env, me } = useScope();
  const [params, setParams] = useSearchParams();
  const raw = params.get("status") ?? "pending";
  const status = raw === "all" || (STATUSES as string[]).includes(raw) ? raw : "pending";
  const [announce, setAnnounce] = useState("");

  const list = useQuery({
    queryKey: crKeys.list(envId, status),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/change-requests", {
          params: { path: { env_id: envId }, query: status === "all" ? {} : { status: status as Status } },
        }),
      ),
    enabled: !!envId,
  });
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const flagByKey = new Map((flags.data ?? []).map((f) => [f.key, f]));

  return (
    <div className="stack gov">
      <PageHeader title="Change requests">
        Flag changes waiting for review{env ? ` in ${env.name}` : ""}. Approving applies the requested patch to the
        flag as it is now.
      </PageHeader>
      <div className="row">
        <Field label="Status">
          {(p) => (
            <select
              {...p}
              value={status}
              onChange={(e) => {
                setAnnounce("");
                setParams(e.target.value === "pending" ? {} : { status: e.target.value }, { replace: true });
              }}
            >
              <option value="pending">Pending</option>
              <option value="approved">Approved</option>
              <option value="rejected">Rejected</option>
              <option value="cancelled">Cancelled</option>
              <option value="all">All</option>
            </select>
          )}
        </Field>
        {list.data && (
          <span className="muted gov-count">
            {list.data.length} request{list.data.length === 1 ? "" : "s"}
          </span>
        )}
      </div>
      {announce && <Notice kind="success">{announce}</Notice>}
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBanner error={list.error} action="view change requests in this environment" />
      ) : list.data.length === 0 ? (
        <Empty title={status === "pending" ? "Nothing waiting for review" : "No change requests"}>
          {status === "pending" && (
            <p>When approval is required in this environment, flag edits are queued here instead of applied.</p>
          )}
        </Empty>
      ) : (
        <ul className="gov-list" aria-label="Change requests">
          {list.data.map((cr) => (
            <RequestItem
              key={cr.id}
              cr={cr}
              flag={flagByKey.get(cr.flag_key)}
              flagHref={envPath(projectId, envId, `flags/${encodeURIComponent(cr.flag_key)}`)}
              mine={!!me && me.email === cr.requested_by}
              canCancel={!!me && (me.email === cr.requested_by || isAdmin(me))}
              onDone={setAnnounce}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

function RequestItem({
  cr,
  flag,
  flagHref,
  mine,
  canCancel,
  onDone,
}: {
  cr: ChangeRequest;
  flag?: Schemas["Flag"];
  flagHref: string;
  mine: boolean;
  canCancel: boolean;
  onDone: (msg: string) => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const envId = cr.environment_id;
  const [rejecting, setRejecting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [showAll, setShowAll] = useState(false);
  const path = { env_id: envId, id: cr.id };
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: crKeys.all(envId) });
    void qc.invalidateQueries({ queryKey: flagKeys.list(envId) });
  };

  const approve = useMutation({
    mutationFn: () => unwrap(api.POST("/api/environments/{env_id}/change-requests/{id}/approve", { params: { path } })),
    onSuccess: (updated) => {
      qc.setQueryData(flagKeys.one(envId, updated.key), updated);
      refresh();
      onDone(`Approved change request #${cr.id}: ${cr.flag_key} is now at version ${updated.version}.`);
    },
  });
  const cancel = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/environments/{env_id}/change-requests/{id}", { params: { path } })),
    onSuccess: () => {
      setCancelling(false);
      refresh();
      onDone(`Cancelled change request #${cr.id} for ${cr.flag_key}.`);
    },
  });

  const patch = asRecord(cr.patch) ?? {};
  const fields = Object.keys(patch).filter((k) => k !== "key");
  const pending = cr.status === "pending";

  return (
    <li className="card gov-item" aria-labelledby={`cr-${cr.id}-title`}>
      <div className="gov-item-head">
        <div>
          <h2 className="gov-item-title" id={`cr-${cr.id}-title`}>
            <Link to={flagHref}>
              <code>{cr.flag_key}</code>
            </Link>{" "}
            <span className="muted">#{cr.id}</span>
          </h2>
          <div className="muted gov-meta">
            Requested by <strong>{cr.requested_by}</strong>
            {mine && " (you)"} · <Time value={cr.created_at} />
            {cr.reviewed_by && (
              <>
                {" "}
                · {cr.status === "approved" ? "approved" : "reviewed"} by <strong>{cr.reviewed_by}</strong>{" "}
                <Time value={cr.reviewed_at} />
              </>
            )}
          </div>
        </div>
        <span className={`pill ${statusPill[cr.status]}`}>{cr.status}</span>
      </div>
      <p className="gov-summary">{patchSummary(patch)}</p>
      {cr.reason && (
        <p className="gov-reason">
          <strong>Reason:</strong> {cr.reason}
        </p>
      )}
      {flag ? (
        <>
          <SideBySide
            leftTitle={pending ? "Current" : "Flag now"}
            rightTitle="Requested"
            left={pickFields(flag, showAll ? Object.keys(flag) : fields)}
            right={showAll ? { ...flag, ...patch } : Object.fromEntries(fields.map((k) => [k, patch[k]]))}
            ignore={["key", "environment_id", "version", "created_at", "updated_at"]}
          />
          <label className="gov-check">
            <input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.target.checked)} /> Show the whole
            flag
          </label>
        </>
      ) : (
        <>
          <p className="muted">The flag no longer exists in this environment; the requested patch:</p>
          <pre className="gov-json">{JSON.stringify(patch, null, 2)}</pre>
        </>
      )}
      {pending && (
        <div className="row">
          <Button variant="primary" busy={approve.isPending} onClick={() => approve.mutate()}>
            Approve
          </Button>
          <Button variant="danger" onClick={() => setRejecting(true)}>
            Reject
          </Button>
          {canCancel && (
            <Button variant="ghost" onClick={() => setCancelling(true)}>
              Cancel request
            </Button>
          )}
          {mine && <span className="muted">Another reviewer has to approve your own request.</span>}
        </div>
      )}
      <ErrorBanner error={approve.error} action="approve this change request" />
      {rejecting && (
        <RejectDialog
          cr={cr}
          onClose={() => setRejecting(false)}
          onRejected={() => {
            setRejecting(false);
            refresh();
            onDone(`Rejected change request #${cr.id} for ${cr.flag_key}.`);
          }}
        />
      )}
      {cancelling && (
        <ConfirmDialog
          title={`Cancel change request #${cr.id}?`}
          confirmLabel="Cancel request"
          cancelLabel="Keep it"
          busy={cancel.isPending}
          error={cancel.error}
          action="cancel this change request"
          onConfirm={() => cancel.mutate()}
          onClose={() => {
            cancel.reset();
            setCancelling(false);
          }}
        >
          The change to <code>{cr.flag_key}</code> will not be applied.
        </ConfirmDialog>
      )}
    </li>
  );
}

function RejectDialog({ cr, onClose, onRejected }: { cr: ChangeRequest; onClose: () => void; onRejected: () => void }) {
  const api = useApi();
  const [reason, setReason] = useState("");
  const [missing, setMissing] = useState(false);
  const reject = useMutation({
    mutationFn: (r: string) =>
      unwrap(
        api.POST("/api/environments/{env_id}/change-requests/{id}/reject", {
          params: { path: { env_id: cr.environment_id, id: cr.id } },
          body: { reason: r },
        }),
      ),
    onSuccess: onRejected,
  });
  const apiErr = reject.error;
  const fieldErr = missing
    ? "Give the requester a reason."
    : fieldErrorOf(apiErr, "reason");
  return (
    <Modal title={`Reject change request #${cr.id}`} onClose={onClose}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          const r = reason.trim();
          if (!r) {
            setMissing(true);
            return;
          }
          reject.mutate(r);
        }}
      >
        <p>
          The change to <code>{cr.flag_key}</code> requested by {cr.requested_by} will not be applied.
        </p>
        <Field label="Reason" hint="Shown to the requester and sent with the rejection notification." error={fieldErr}>
          {(p) => (
            <textarea
              {...p}
              value={reason}
              maxLength={2000}
              onChange={(e) => {
                setReason(e.target.value);
                if (e.target.value.trim()) setMissing(false);
              }}
            />
          )}
        </Field>
        <ErrorBanner error={apiErr} action="reject this change request" />
        <div className="row gov-actions-end">
          <Button onClick={onClose}>Back</Button>
          <Button type="submit" variant="danger" busy={reject.isPending}>
            Reject request
          </Button>
        </div>
      </form>
    </Modal>
  );
}
