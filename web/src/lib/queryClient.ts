// The dashboard's one QueryClient.
import { MutationCache, QueryCache, QueryClient } from "@tanstack/react-query";
import { ApiError } from "../api/client";
import { keys } from "./session";

export function newQueryClient(): QueryClient {
  // A 401 on any request means the session has ended (signed out elsewhere,
  // expired, or the user was deactivated): asking who is signed in again
  // makes every screen fall back to the sign-in page at once.
  const onError = (err: unknown) => {
    if (err instanceof ApiError && err.status === 401) void client.invalidateQueries({ queryKey: keys.me });
  };
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        // 4xx answers are final; retry only what may be transient.
        retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2,
        refetchOnWindowFocus: true,
        staleTime: 5_000,
      },
    },
  });
  return client;
}
