// The flag page's "Guarded release" card: the running or paused release of
// the flag (with a link to it), or why none can start, or the way to start
// one; and the flag's last ended release. Boolean flags only: a release
// ramps true against false, so other flags do not show the card.
import { useId } from "react";
import { Link } from "react-router";
import { errorMessage } from "../../api/client";
import { Time } from "../../components/ui";
import { envPath } from "../../lib/session";
import type { Flag } from "../flags/flagform";
import { ReleaseStatusPill, releasePath, stageText, useFlagReleases } from "./common";
import { blocker, isActive } from "./releaseform";
import "./releases.css";

export function ReleasePanel({
  flag,
  env,
  projectId,
}: {
  flag: Flag;
  env?: { id: string; name: string; require_approval: boolean };
  projectId: string;
}) {
  const headingId = useId();
  const whyId = useId();
  const envId = flag.environment_id;
  const releases = useFlagReleases(envId, flag.key);
  if (flag.flag_type !== "boolean") return null;
  const list = releases.data ?? [];
  const active = list.find((r) => isActive(r.status));
  const lastEnded = list.find((r) => !isActive(r.status));
  const why = blocker(flag, env, active);
  return (
    <section className="card editor-section release-panel" aria-labelledby={headingId}>
      <div className="section-head">
        <h2 id={headingId}>Guarded release</h2>
        {list.length > 0 && (
          <Link to={`${envPath(projectId, envId, "releases")}?flag=${encodeURIComponent(flag.key)}`}>
            All releases of this flag ({list.length})
          </Link>
        )}
      </div>
      {releases.error && (
        // Secondary to the flag, like its status: said quietly, the editor works on.
        <p className="muted" role="status">
          This flag’s releases could not be loaded ({errorMessage(releases.error)}).
        </p>
      )}
      {active ? (
        <p className="release-active">
          <ReleaseStatusPill status={active.status} /> A guarded release is {active.status} at {stageText(active)}.{" "}
          <Link to={releasePath(projectId, envId, active.id)}>Open the release</Link>
          <br />
          <span className="muted">
            Changing this flag’s rollout, switch, rules, variants or prerequisites here cancels the release.
          </span>
        </p>
      ) : (
        <>
          <p className="muted">
            Ramp the rollout through stages while guardrail metrics compare the users who get <code>true</code> with those
            who do not; a metric that gets worse beyond its tolerance rolls the flag back to 0 % by itself.
          </p>
          {why ? (
            <p className="row">
              <button type="button" className="btn" disabled aria-describedby={whyId}>
                Start a guarded release
              </button>
              <span id={whyId}>{why.text}</span>
            </p>
          ) : (
            releases.isSuccess && (
              <p>
                <Link className="btn btn-primary" to={envPath(projectId, envId, `flags/${encodeURIComponent(flag.key)}/releases/new`)}>
                  Start a guarded release
                </Link>
              </p>
            )
          )}
        </>
      )}
      {lastEnded && (
        <p className="muted release-last">
          Last release: <ReleaseStatusPill status={lastEnded.status} />{" "}
          {lastEnded.ended_at && <Time value={lastEnded.ended_at} />}
          {lastEnded.reason && <> — {lastEnded.reason}</>}{" "}
          <Link to={releasePath(projectId, envId, lastEnded.id)}>Open</Link>
        </p>
      )}
    </section>
  );
}
