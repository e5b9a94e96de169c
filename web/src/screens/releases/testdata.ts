// A release as the API returns it, for the release screens' tests. (A fake
// route's reply with a "status" key is read as { status, body }: wrap a
// release in { body } when it is the whole reply.)
import type { Schemas } from "../../api/client";

export function release(over: Partial<Schemas["Release"]> = {}): Schemas["Release"] {
  return {
    id: "11111111-1111-4111-8111-111111111111",
    environment_id: "e1",
    flag_key: "checkout",
    status: "running",
    stages: [
      { percentage: 10, duration_seconds: 120 },
      { percentage: 50, duration_seconds: 3600 },
      { percentage: 100, duration_seconds: 86400 },
    ],
    stage_index: 0,
    stage_started_at: "2026-11-20T10:00:00Z",
    metrics: [{ event_key: "purchase", kind: "conversion", bad_direction: "decrease", tolerance: 0.05 }],
    alpha: 0.05,
    min_users: 100,
    check_interval_seconds: 60,
    previous_rollout_percentage: null,
    reason: null,
    created_by: 1,
    started_at: "2026-11-20T10:00:00Z",
    ended_at: null,
    analysis: null,
    created_at: "2026-11-20T10:00:00Z",
    updated_at: "2026-11-20T10:00:00Z",
    ...over,
  };
}
