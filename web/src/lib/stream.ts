// useFlagStream keeps the flag queries of one environment live: it holds a
// /stream connection (authenticated by the session cookie) and, after the
// bootstrap, refreshes the cached flag list, flag, flag status and guarded
// releases on every update.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { Schemas } from "../api/client";
import { keys } from "./session";

export type StreamState = "connecting" | "live" | "offline";

export const flagKeys = {
  list: (envId: string) => ["flags", envId] as const,
  one: (envId: string, key: string) => ["flags", envId, key] as const,
};

// Not under flagKeys ("flags", env, key): a flag may be called anything a key
// allows, "status" included.
export const flagStatusKey = (envId: string) => ["flag-status", envId] as const;

// Every guarded-release query of an environment starts with this key. A
// release writes its flag when it starts, advances, rolls back and when a
// person's change cancels it, so a flag update refreshes the open releases.
export const releasesKey = (envId: string) => ["releases", envId] as const;

export function useFlagStream(envId: string): StreamState {
  const queryClient = useQueryClient();
  const [state, setState] = useState<StreamState>("connecting");

  useEffect(() => {
    if (!envId || typeof EventSource === "undefined") return;
    const source = new EventSource(`/stream?environment_id=${encodeURIComponent(envId)}`);
    let ready = false;
    setState("connecting");
    source.addEventListener("ready", () => {
      ready = true;
      setState("live");
      // Anything may have changed while we were away.
      void queryClient.invalidateQueries({ queryKey: ["flags", envId] });
      void queryClient.invalidateQueries({ queryKey: flagStatusKey(envId) });
      void queryClient.invalidateQueries({ queryKey: releasesKey(envId) });
    });
    source.addEventListener("update", (e) => {
      if (!ready) return; // the bootstrap repeats what the list already shows
      // Stream flags are segment-expanded; the API's are not, so refetch rather than copy.
      const update = JSON.parse((e as MessageEvent<string>).data) as Schemas["StreamUpdate"];
      const key = update.flag?.key ?? update.key;
      void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
      if (key) void queryClient.invalidateQueries({ queryKey: flagKeys.one(envId, key) });
      // A change makes a launched flag active (docs/reference/measurement.md,
      // Flag status: "has not changed for 7 days"), and a new or deleted flag
      // adds or drops a row.
      void queryClient.invalidateQueries({ queryKey: flagStatusKey(envId) });
      void queryClient.invalidateQueries({ queryKey: releasesKey(envId) });
    });
    source.onerror = () => {
      ready = false;
      setState("offline"); // EventSource reconnects by itself
      // The server also ends a stream when the session behind it ends (the
      // user was deactivated, or signed out elsewhere); asking who is signed
      // in sends the page to sign-in if so.
      void queryClient.invalidateQueries({ queryKey: keys.me });
    };
    return () => source.close();
  }, [envId, queryClient]);

  return state;
}
