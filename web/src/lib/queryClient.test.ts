import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import { newQueryClient } from "./queryClient";
import { keys } from "./session";

describe("newQueryClient", () => {
  it("asks who is signed in again after any 401", async () => {
    const client = newQueryClient();
    client.setQueryData(keys.me, { id: 1 });
    await client.fetchQuery({ queryKey: ["other"], queryFn: () => Promise.reject(new ApiError(401, { error: "session ended" })) }).catch(() => {});
    expect(client.getQueryState(keys.me)?.isInvalidated).toBe(true);
  });

  it("leaves the session alone on other errors", async () => {
    const client = newQueryClient();
    client.setQueryData(keys.me, { id: 1 });
    await client.fetchQuery({ queryKey: ["other"], queryFn: () => Promise.reject(new ApiError(403, { error: "no" })) }).catch(() => {});
    await client
      .getMutationCache()
      .build(client, { mutationFn: () => Promise.reject(new ApiError(422, {})) })
      .execute(undefined)
      .catch(() => {});
    expect(client.getQueryState(keys.me)?.isInvalidated).toBe(false);
  });

  it("counts a failed mutation's 401 too", async () => {
    const client = newQueryClient();
    client.setQueryData(keys.me, { id: 1 });
    await client
      .getMutationCache()
      .build(client, { mutationFn: () => Promise.reject(new ApiError(401, {})) })
      .execute(undefined)
      .catch(() => {});
    expect(client.getQueryState(keys.me)?.isInvalidated).toBe(true);
  });
});
