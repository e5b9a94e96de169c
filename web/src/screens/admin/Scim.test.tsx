import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { accessibilityProblems } from "../../test/axe";
import { renderScreen } from "../../test/render";
import Scim from "./Scim";

const okta: Schemas["ScimToken"] = {
  id: 4,
  name: "Okta",
  prefix: "scim_0a1b2c3",
  created_at: "2026-01-01T00:00:00Z",
  last_used_at: null,
};

test("the base URL to give the provider, and a new token shown once with its warning", async () => {
  let list: Schemas["ScimToken"][] = [okta];
  const { calls } = renderScreen(<Scim />, {
    url: "/admin/scim",
    routes: {
      "GET /api/workspace/scim-tokens": () => list,
      "POST /api/workspace/scim-tokens": () => {
        list = [{ ...okta, id: 5, name: "Entra ID", prefix: "scim_ffee001" }, ...list];
        return { status: 201, body: { id: 5, name: "Entra ID", token: "scim_" + "ab".repeat(32), prefix: "scim_ffee001", created_at: "2026-02-01T00:00:00Z" } };
      },
    },
  });
  expect(screen.getByTestId("scim-base-url")).toHaveTextContent(`${window.location.origin}/scim/v2`);
  expect(screen.getByRole("button", { name: "Copy the SCIM base URL" })).toBeInTheDocument();
  const row = (await screen.findByRole("rowheader", { name: "Okta" })).closest("tr")!;
  expect(within(row).getByText("Never used")).toBeInTheDocument();
  expect(within(row).getByText("scim_0a1b2c3…")).toBeInTheDocument();

  await userEvent.type(screen.getByLabelText("Token name"), "  Entra ID ");
  await userEvent.click(screen.getByRole("button", { name: "Create token" }));
  const secret = await screen.findByTestId("secret");
  expect(secret).toHaveTextContent("scim_" + "ab".repeat(32));
  expect(secret.closest(".secret-once")).toHaveTextContent("it will not be shown again");
  expect(calls.filter((c) => c.method === "POST").map((c) => c.body)).toEqual([{ name: "Entra ID" }]);
  expect(screen.getByLabelText("Token name")).toHaveValue("");
  // The list names the new token by its prefix only.
  const created = (await screen.findByRole("rowheader", { name: "Entra ID" })).closest("tr")!;
  expect(within(created).getByText("scim_ffee001…")).toBeInTheDocument();
  expect(screen.getAllByText(new RegExp("scim_" + "ab".repeat(32)))).toHaveLength(1);
  expect(await accessibilityProblems()).toEqual([]);
});

test("an empty name is refused locally, and revoke asks before DELETE", async () => {
  let list: Schemas["ScimToken"][] = [{ ...okta, last_used_at: new Date(Date.now() - 120_000).toISOString() }];
  const { calls } = renderScreen(<Scim />, {
    url: "/admin/scim",
    routes: {
      "GET /api/workspace/scim-tokens": () => list,
      "DELETE /api/workspace/scim-tokens/4": () => {
        list = [];
        return { status: 204 };
      },
    },
  });
  const row = (await screen.findByRole("rowheader", { name: "Okta" })).closest("tr")!;
  expect(within(row).getByText("2 minutes ago")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Create token" }));
  expect(screen.getByLabelText("Token name")).toHaveAccessibleDescription("Name the token after the identity provider that will use it.");

  await userEvent.click(screen.getByRole("button", { name: "Revoke Okta" }));
  const dialog = screen.getByRole("dialog", { name: "Revoke “Okta”?" });
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(within(dialog).getByRole("button", { name: "Revoke token" }));
  expect(await screen.findByText(/Revoked “Okta”/)).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual(["/api/workspace/scim-tokens/4"]);
  expect(calls.some((c) => c.method === "POST")).toBe(false);
  await waitFor(() => expect(screen.getByText("No SCIM tokens")).toBeInTheDocument());
});

test("a non-admin reads a permission message", async () => {
  renderScreen(<Scim />, {
    url: "/admin/scim",
    routes: { "GET /api/workspace/scim-tokens": { status: 403, body: { error: "workspace admins only" } } },
  });
  expect(await screen.findByRole("alert")).toHaveTextContent("You do not have permission to manage SCIM tokens.");
});
