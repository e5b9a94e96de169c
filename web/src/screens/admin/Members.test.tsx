import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { envUrl, me, scopeRoutes } from "../../test/fixtures";
import Members from "./Members";

const members = [
  { user_id: 1, name: "Ada", email: "ada@example.com", role: "admin" },
  { user_id: 2, name: "Alice", email: "alice@example.com", role: "editor" },
];
const users = [
  { id: 1, name: "Ada", email: "ada@example.com", role: "admin", created_at: "2026-01-01T00:00:00Z" },
  { id: 2, name: "Alice", email: "alice@example.com", role: "editor", created_at: "2026-01-01T00:00:00Z" },
  { id: 3, name: "Bob", email: "bob@example.com", role: "viewer", created_at: "2026-01-01T00:00:00Z" },
];

test("a workspace admin picks a non-member user; role changes send PATCH", async () => {
  const { calls } = renderScreen(<Members />, {
    ...envUrl("members"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/members": members,
      "GET /api/users": users,
      "POST /api/projects/p1/members": { user_id: 3, name: "Bob", email: "bob@example.com", role: "viewer" },
      "PATCH /api/projects/p1/members/2": { ...members[1], role: "viewer" },
    },
  });
  const userSelect = await screen.findByLabelText("User");
  await screen.findByRole("option", { name: "Bob (bob@example.com)" });
  // members already in the project are not offered
  expect(within(userSelect).queryByRole("option", { name: /Alice/ })).toBeNull();
  await userEvent.selectOptions(userSelect, "3");
  await userEvent.selectOptions(screen.getByLabelText("Project role"), "viewer");
  await userEvent.click(screen.getByRole("button", { name: "Add member" }));
  await screen.findByText("Added Bob as viewer.");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ user_id: 3, role: "viewer" });

  await userEvent.selectOptions(screen.getByLabelText("Role of Alice"), "viewer");
  await waitFor(() => expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ role: "viewer" }));
});

test("without the right to list users, members are added by id; removal shows the server's refusal", async () => {
  const { calls } = renderScreen(<Members />, {
    ...envUrl("members"),
    routes: {
      ...scopeRoutes({ ...me, role: "editor" }),
      "GET /api/projects/p1/members": members,
      "POST /api/projects/p1/members": { status: 404, body: { error: "user not found" } },
      "DELETE /api/projects/p1/members/1": { status: 422, body: { error: "a project needs at least one admin" } },
    },
  });
  const idField = await screen.findByLabelText("User id");
  await userEvent.type(idField, "42");
  await userEvent.click(screen.getByRole("button", { name: "Add member" }));
  expect(await screen.findByText("user not found")).toBeInTheDocument();
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ user_id: 42, role: "editor" });
  expect(calls.some((c) => c.path === "/api/users")).toBe(false);

  await userEvent.click(screen.getByRole("button", { name: "Remove Ada" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.click(within(dialog).getByRole("button", { name: "Remove member" }));
  expect(await within(dialog).findByRole("alert")).toHaveTextContent("a project needs at least one admin");
});
