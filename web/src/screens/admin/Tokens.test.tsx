import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { renderScreen } from "../../test/render";
import Tokens from "./Tokens";

const existing: Schemas["Token"] = {
  id: 7,
  name: "old-ci",
  prefix: "pat_ab12",
  scope: "read_only",
  created_at: "2025-01-01T00:00:00Z",
  last_used_at: null,
  expires_at: "2025-02-01T00:00:00Z",
};

test("creating a token sends name, scope and expiry, and shows the secret once", async () => {
  let list: Schemas["Token"][] = [existing];
  const { calls } = renderScreen(<Tokens />, {
    url: "/account/tokens",
    routes: {
      "GET /api/tokens": () => list,
      "POST /api/tokens": () => {
        list = [...list, { ...existing, id: 8, name: "deploy", scope: "read_write", expires_at: null }];
        return { id: 8, name: "deploy", token: "pat_FULLSECRET", prefix: "pat_FULL", scope: "read_write", created_at: "2026-01-01T00:00:00Z", expires_at: null };
      },
    },
  });
  const row = (await screen.findByRole("rowheader", { name: "old-ci" })).closest("tr")!;
  expect(within(row).getByText("Expired")).toBeInTheDocument();
  expect(within(row).getByText("Never used")).toBeInTheDocument();

  await userEvent.type(screen.getByLabelText("Token name"), "deploy");
  await userEvent.selectOptions(screen.getByLabelText("Scope"), "read_write");
  await userEvent.selectOptions(screen.getByLabelText("Expires in"), "Never");
  await userEvent.click(screen.getByRole("button", { name: "Create token" }));
  expect(await screen.findByTestId("secret")).toHaveTextContent("pat_FULLSECRET");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "deploy", scope: "read_write" });

  await userEvent.type(screen.getByLabelText("Token name"), "nightly");
  await userEvent.selectOptions(screen.getByLabelText("Expires in"), "30 days");
  await userEvent.click(screen.getByRole("button", { name: "Create token" }));
  await waitFor(() => expect(calls.filter((c) => c.method === "POST")).toHaveLength(2));
  expect(calls.filter((c) => c.method === "POST")[1]?.body).toEqual({ name: "nightly", scope: "read_write", expires_in_days: 30 });
});

test("an empty name is refused locally and revoke confirms before DELETE", async () => {
  const { calls } = renderScreen(<Tokens />, {
    url: "/account/tokens",
    routes: { "GET /api/tokens": [existing], "DELETE /api/tokens/7": { status: 204 } },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Create token" }));
  expect(screen.getByText("Name the token after where it will be used.")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Revoke old-ci" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(screen.getByRole("button", { name: "Revoke token" }));
  expect(await screen.findByText(/Revoked “old-ci”/)).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);
  expect(calls.find((c) => c.method === "DELETE")?.path).toBe("/api/tokens/7");
});
