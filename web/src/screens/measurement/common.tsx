// Shared pieces of the measurement screens: queries, field errors, status pill.
import { useQuery } from "@tanstack/react-query";
import { ApiError, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { flagKeys } from "../../lib/stream";

export const measurementKeys = {
  experiments: (envId: string) => ["experiments", envId] as const,
  results: (envId: string, key: string) => ["experiments", envId, key, "results"] as const,
  eventKeys: (envId: string) => ["event-keys", envId] as const,
  impressionStats: (envId: string) => ["impression-stats", envId] as const,
  exposure: (envId: string, flagKey: string, days: number) => ["exposure", envId, flagKey, days] as const,
};

// useFlags is the environment's flag list under the key the live stream refreshes.
export function useFlags(envId: string) {
  const api = useApi();
  return useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
  });
}

export function useEventKeys(envId: string) {
  const api = useApi();
  return useQuery({
    queryKey: measurementKeys.eventKeys(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/events/keys", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
  });
}

// fieldErr is the server's message for a field, or the 409 duplicate-key message for "key".
export function fieldErr(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 409 && field === "key") return error.message || "An experiment with this key already exists.";
  return error.status === 422 ? error.fieldError(field) : undefined;
}

export function StatusPill({ status }: { status: string }) {
  const cls = status === "running" ? "pill-success" : status === "paused" ? "pill-warning" : "";
  return <span className={`pill ${cls}`}>{status}</span>;
}
