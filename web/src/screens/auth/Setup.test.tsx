import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { Setup } from "./Setup";

test("the wizard creates the first admin, shows 422 details by field, then leaves for /", async () => {
  let setUp = false;
  let attempt = 0;
  const { calls } = renderScreen(<Setup />, {
    url: "/setup",
    routes: {
      "GET /api/auth/workspace": () => ({ workspace_name: "Switchyard", is_setup_complete: setUp }),
      "POST /api/auth/setup": () => {
        attempt++;
        if (attempt === 1) {
          return { status: 422, body: { error: "email: invalid", details: [{ field: "email", message: "must be an email address" }] } };
        }
        setUp = true;
        return { id: 1, email: "a@example.com", name: "Ada", role: "admin", workspace_name: "Acme", is_setup_complete: true };
      },
    },
  });
  await userEvent.type(await screen.findByLabelText("Workspace name"), "Acme");
  await userEvent.click(screen.getByRole("button", { name: "Continue" }));
  await userEvent.type(screen.getByLabelText("Your name"), "Ada");
  await userEvent.type(screen.getByLabelText("Email"), "not-an-email");
  await userEvent.type(screen.getByLabelText("Password"), "long enough");
  await userEvent.click(screen.getByRole("button", { name: "Create admin and sign in" }));
  expect(await screen.findByText("must be an email address")).toBeInTheDocument();
  expect(screen.getByLabelText("Email")).toHaveAttribute("aria-invalid", "true");

  await userEvent.clear(screen.getByLabelText("Email"));
  await userEvent.type(screen.getByLabelText("Email"), "a@example.com");
  await userEvent.click(screen.getByRole("button", { name: "Create admin and sign in" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
  expect(calls.filter((c) => c.path === "/api/auth/setup").at(-1)?.body).toEqual({
    workspace_name: "Acme",
    name: "Ada",
    email: "a@example.com",
    password: "long enough",
  });
});
