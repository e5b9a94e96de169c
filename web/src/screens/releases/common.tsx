// Queries and small pieces the release screens share, and that the flag list
// and flag page use to show a flag's release. Every query key starts with
// releasesKey(envId), so the live stream refreshes them on each flag update
// (a release writes its flag as it starts, advances and rolls back); the
// release page also polls while the release is guarding.
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { envPath } from "../../lib/session";
import { releasesKey } from "../../lib/stream";
import { STATUS_LABEL, isActive, type Release, type ReleaseStatus } from "./releaseform";
import "./releases.css";

// POLL_MS: how often a running or paused release (and its checks) is read again.
export const POLL_MS = 5_000;

export const releaseKeys = {
  list: (envId: string, status: string, flagKey: string) => [...releasesKey(envId), "list", status, flagKey] as const,
  active: (envId: string) => [...releasesKey(envId), "active"] as const,
  flag: (envId: string, flagKey: string) => [...releasesKey(envId), "flag", flagKey] as const,
  one: (envId: string, id: string) => [...releasesKey(envId), "one", id] as const,
  checks: (envId: string, id: string) => [...releasesKey(envId), "checks", id] as const,
};

// useActiveReleases: the environment's running and paused releases by flag
// key (at most one per flag), for the flag list's badges.
export function useActiveReleases(envId: string) {
  const api = useApi();
  const query = useQuery({
    queryKey: releaseKeys.active(envId),
    queryFn: async () => {
      const get = (status: ReleaseStatus) =>
        unwrap(api.GET("/api/environments/{env_id}/releases", { params: { path: { env_id: envId }, query: { status } } }));
      const [running, paused] = await Promise.all([get("running"), get("paused")]);
      return [...running, ...paused];
    },
    enabled: !!envId,
  });
  const byFlag = new Map((query.data ?? []).map((r) => [r.flag_key, r]));
  return { query, byFlag };
}

// useFlagReleases: every release of one flag, newest first.
export function useFlagReleases(envId: string, flagKey: string) {
  const api = useApi();
  return useQuery({
    queryKey: releaseKeys.flag(envId, flagKey),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/releases", { params: { path: { env_id: envId }, query: { flag_key: flagKey } } }),
      ),
    enabled: !!envId && !!flagKey,
  });
}

export function releasePath(projectId: string, envId: string, id: string): string {
  return envPath(projectId, envId, `releases/${id}`);
}

// stageText: "stage 2 of 3, 50 %".
export function stageText(r: Pick<Release, "stages" | "stage_index">): string {
  const st = r.stages[r.stage_index];
  return `stage ${r.stage_index + 1} of ${r.stages.length}${st ? `, ${st.percentage} %` : ""}`;
}

export function ReleaseStatusPill({ status }: { status: ReleaseStatus }) {
  return (
    <span className={`pill release-status release-${status}`} data-release-status={status}>
      {STATUS_LABEL[status]}
    </span>
  );
}

// ReleasingBadge marks a flag with a running or paused release in the flag
// list, linking to the release.
export function ReleasingBadge({ release, projectId, envId }: { release: Release; projectId: string; envId: string }) {
  const paused = release.status === "paused";
  const st = release.stages[release.stage_index];
  return (
    <Link
      to={releasePath(projectId, envId, release.id)}
      className={`pill pill-releasing${paused ? " pill-releasing-paused" : ""}`}
      title={`Guarded release ${release.status}: ${stageText(release)}`}
      data-release={release.status}
    >
      {paused ? "release paused" : "releasing"}
      {st ? ` · ${st.percentage} %` : ""}
    </Link>
  );
}

export { isActive };
