import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { me } from "../../test/fixtures";
import Users from "./Users";

const alice = {
  id: 2,
  name: "Alice",
  email: "alice@example.com",
  role: "editor",
  active: true,
  sso_linked: false,
  created_at: "2026-01-02T00:00:00Z",
};

test("new user: validates before sending, then posts the form and shows a 409 next to Email", async () => {
  const { calls } = renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": me,
      "GET /api/users": [alice],
      "POST /api/users": { status: 409, body: { error: "email already in use" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "New user" }));
  const dialog = screen.getByRole("dialog", { name: "New user" });
  await userEvent.click(within(dialog).getByRole("button", { name: "Create user" }));
  expect(within(dialog).getByText("At least 8 characters.")).toBeInTheDocument();
  expect(within(dialog).getByText("Enter a valid email address.")).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);

  await userEvent.type(within(dialog).getByLabelText("Name"), "Bob");
  await userEvent.type(within(dialog).getByLabelText("Email"), "alice@example.com");
  await userEvent.type(within(dialog).getByLabelText("Password"), "s3cret-pass");
  await userEvent.selectOptions(within(dialog).getByLabelText("Role"), "viewer");
  await userEvent.click(within(dialog).getByRole("button", { name: "Create user" }));

  const email = within(dialog).getByLabelText("Email");
  await waitFor(() => expect(email).toHaveAttribute("aria-invalid", "true"));
  expect(email).toHaveAccessibleDescription("email already in use");
  const post = calls.find((c) => c.method === "POST" && c.path === "/api/users");
  expect(post?.body).toEqual({ name: "Bob", email: "alice@example.com", password: "s3cret-pass", role: "viewer" });
});

test("a 422 detail lands next to its field and editing sends only name and role", async () => {
  const { calls } = renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": me,
      "GET /api/users": [alice],
      "PATCH /api/users/2": { status: 422, body: { error: "the last workspace admin cannot be demoted", details: [] } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Edit alice@example.com" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.selectOptions(within(dialog).getByLabelText("Role"), "admin");
  await userEvent.click(within(dialog).getByRole("button", { name: "Save changes" }));
  expect(await within(dialog).findByText("the last workspace admin cannot be demoted")).toBeInTheDocument();
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ name: "Alice", role: "admin" });
});

test("a non-admin reads a permission message instead of a crash", async () => {
  renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": { ...me, role: "editor" },
      "GET /api/users": { status: 403, body: { error: "forbidden" } },
    },
  });
  expect(await screen.findByRole("alert")).toHaveTextContent("You do not have permission");
});

test("delete asks first and sends DELETE only after confirming", async () => {
  const { calls } = renderScreen(<Users />, {
    url: "/admin/users",
    routes: { "GET /api/auth/me": me, "GET /api/users": [alice], "DELETE /api/users/2": { status: 204 } },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Delete alice@example.com" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(screen.getByRole("button", { name: "Delete user" }));
  expect(await screen.findByText("Deleted alice@example.com.")).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual(["/api/users/2"]);
});

test("shows who is deactivated and linked, and deactivates only after confirming", async () => {
  const bob = { ...alice, id: 3, name: "Bob", email: "bob@example.com", active: false, sso_linked: true };
  const { calls } = renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": me,
      "GET /api/users": [alice, bob, { ...alice, id: me.id, name: me.name, email: me.email, role: "admin" }],
      "PATCH /api/users/2": { ...alice, active: false },
    },
  });
  const bobRow = (await screen.findByRole("rowheader", { name: "Bob" })).closest("tr")!;
  expect(within(bobRow).getByText("deactivated")).toBeInTheDocument();
  expect(within(bobRow).getByText("SSO linked")).toBeInTheDocument();
  expect(within(bobRow).getByRole("button", { name: "Reactivate bob@example.com" })).toBeInTheDocument();
  const aliceRow = screen.getByRole("rowheader", { name: "Alice" }).closest("tr")!;
  expect(within(aliceRow).getByText("active")).toBeInTheDocument();
  expect(within(aliceRow).queryByText("SSO linked")).not.toBeInTheDocument();
  // Nobody deactivates themself: no button on your own row.
  expect(screen.queryByRole("button", { name: `Deactivate ${me.email}` })).not.toBeInTheDocument();

  await userEvent.click(screen.getByRole("button", { name: "Deactivate alice@example.com" }));
  const dialog = screen.getByRole("dialog", { name: "Deactivate Alice?" });
  expect(calls.some((c) => c.method === "PATCH")).toBe(false);
  await userEvent.click(within(dialog).getByRole("button", { name: "Deactivate user" }));
  expect(await screen.findByText("Deactivated alice@example.com.")).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "PATCH").map((c) => [c.path, c.body])).toEqual([
    ["/api/users/2", { active: false }],
  ]);
});

test("reactivation confirms and a refusal shows in the dialog", async () => {
  const bob = { ...alice, id: 3, name: "Bob", email: "bob@example.com", active: false };
  const { calls } = renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": me,
      "GET /api/users": [bob],
      "PATCH /api/users/3": { status: 404, body: { error: "user not found" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Reactivate bob@example.com" }));
  const dialog = screen.getByRole("dialog", { name: "Reactivate Bob?" });
  await userEvent.click(within(dialog).getByRole("button", { name: "Reactivate user" }));
  expect(await within(dialog).findByText("user not found")).toBeInTheDocument();
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ active: true });
});
