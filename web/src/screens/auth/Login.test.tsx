import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { ApiError } from "../../api/client";
import { renderScreen } from "../../test/render";
import { Login, loginMessage } from "./Login";

const workspace = { workspace_name: "Acme", is_setup_complete: true };

test("lockout message names the minutes left and the time it ends", () => {
  const now = new Date("2026-11-22T10:00:00Z");
  const msg = loginMessage(new ApiError(429, { error: "locked", retry_after_seconds: 301 }), now);
  expect(msg).toMatch(/try again in 6 minutes/);
});

test("a wrong password shows the attempts left, and the request carries the CSRF header", async () => {
  const { calls } = renderScreen(<Login />, {
    url: "/login",
    routes: {
      "GET /api/auth/workspace": workspace,
      "POST /api/auth/login": { status: 401, body: { error: "invalid email or password", attempts_remaining: 3 } },
    },
  });
  expect(await screen.findByRole("heading", { name: "Sign in to Acme" })).toBeInTheDocument();
  await userEvent.type(screen.getByLabelText("Email"), "a@example.com");
  await userEvent.type(screen.getByLabelText("Password"), "wrong-password");
  await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("3 attempts left");
  const login = calls.find((c) => c.path === "/api/auth/login");
  expect(login?.body).toEqual({ email: "a@example.com", password: "wrong-password" });
  expect(login?.headers.get("X-Service-Request")).toBe("true");
});

test("a successful sign-in follows ?next", async () => {
  renderScreen(<Login />, {
    url: "/login?next=/projects/p/envs/e/flags",
    pattern: "/login",
    routes: {
      "GET /api/auth/workspace": workspace,
      "POST /api/auth/login": { id: 1, email: "a@example.com", name: "A", role: "admin", workspace_name: "Acme", is_setup_complete: true },
    },
  });
  await userEvent.type(await screen.findByLabelText("Email"), "a@example.com");
  await userEvent.type(screen.getByLabelText("Password"), "right-password");
  await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
});
