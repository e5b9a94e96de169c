import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import Schedules, { buildPatch } from "./Schedules";
import { flag, me, scopeRoutes } from "../../test/fixtures";

const reviewer = { ...me, role: "editor" as const };
import { toRfc3339Local } from "./shared";

const url = `/projects/p1/envs/e1/schedules`;
const pattern = "/projects/:projectId/envs/:envId/schedules";

const pendingChange = {
  id: "11111111-1111-1111-1111-111111111111",
  environment_id: "e1",
  flag_key: "new-checkout",
  scheduled_at: "2099-01-01T09:00:00Z",
  patch: { is_enabled: false },
  executed_at: null,
  attempts: 2,
  last_error: "flag is archived",
  created_at: "2026-11-22T09:00:00Z",
};
const appliedChange = {
  ...pendingChange,
  id: "22222222-2222-2222-2222-222222222222",
  flag_key: "old-banner",
  patch: { rollout_percentage: 50 },
  executed_at: "2026-11-21T09:00:00Z",
  attempts: 1,
  last_error: null,
};

function routes(extra: Record<string, unknown> = {}) {
  return {
    ...scopeRoutes(reviewer),
    "GET /api/environments/e1/scheduled-changes": [pendingChange, appliedChange],
    "GET /api/environments/e1/flags": [flag({ key: "new-checkout", is_enabled: false }), flag({ key: "old-banner", is_enabled: false, archived_at: "2026-11-01T00:00:00Z" })],
    ...extra,
  };
}

test("datetime-local values become RFC 3339 with the browser's offset", () => {
  const out = toRfc3339Local("2026-11-22T09:30");
  expect(out).toMatch(/^2026-11-22T09:30:00[+-]\d{2}:\d{2}$/);
  expect(new Date(out).getTime()).toBe(new Date(2026, 10, 22, 9, 30).getTime());
  expect(toRfc3339Local("2026-02-30T10:00")).toBe("");
  const prev = process.env.TZ;
  try {
    process.env.TZ = "Asia/Kolkata";
    expect(toRfc3339Local("2026-11-22T09:30")).toBe("2026-11-22T09:30:00+05:30");
    process.env.TZ = "America/New_York";
    expect(toRfc3339Local("2026-07-01T23:05")).toBe("2026-07-01T23:05:00-04:00");
  } finally {
    process.env.TZ = prev;
    if (prev === undefined) delete process.env.TZ;
  }
  expect(toRfc3339Local("")).toBe("");
});

test("buildPatch validates the rollout and the custom JSON", () => {
  expect(buildPatch("disable", "", "")).toEqual({ patch: { is_enabled: false } });
  expect(buildPatch("rollout", "101", "").error).toMatch(/0 to 100/);
  expect(buildPatch("rollout", "0", "")).toEqual({ patch: { rollout_percentage: 0 } });
  expect(buildPatch("custom", "", "[1]").error).toMatch(/JSON object/);
  expect(buildPatch("custom", "", '{"tags":["a"]}')).toEqual({ patch: { tags: ["a"] } });
});

test("shows upcoming changes with their failures; applied ones on request", async () => {
  renderScreen(<Schedules />, { url, pattern, routes: routes() });
  const row = await screen.findByRole("row", { name: /new-checkout/ });
  expect(row).toHaveTextContent("Turn off");
  expect(row).toHaveTextContent("Failing");
  expect(row).toHaveTextContent("2 failed attempts");
  expect(row).toHaveTextContent("flag is archived");
  expect(screen.queryByRole("row", { name: /old-banner/ })).not.toBeInTheDocument();
  await userEvent.selectOptions(screen.getByLabelText("Show"), "applied");
  expect(screen.getByRole("row", { name: /old-banner/ })).toHaveTextContent("Applied");
});

test("scheduling sends the flag, the RFC 3339 time and the patch", async () => {
  const { calls } = renderScreen(<Schedules />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/flags/new-checkout/scheduled-changes": (c: { body: unknown }) => ({
        ...pendingChange,
        ...(c.body as object),
        id: "33333333-3333-3333-3333-333333333333",
      }),
    }),
  });
  await screen.findByRole("option", { name: /new-checkout/ });
  // archived flags cannot be scheduled
  expect(screen.queryByRole("option", { name: /old-banner/ })).not.toBeInTheDocument();
  expect(screen.getByText(/Your time zone: .*\(UTC[+-]\d\d:\d\d\)/)).toBeInTheDocument();
  await userEvent.selectOptions(screen.getByLabelText("Flag"), "new-checkout");
  fireEvent.change(screen.getByLabelText("When"), { target: { value: "2099-03-01T08:15" } });
  await userEvent.selectOptions(screen.getByLabelText("Change"), "rollout");
  await userEvent.type(screen.getByLabelText("Rollout percentage"), "25");
  await userEvent.click(screen.getByRole("button", { name: "Schedule change" }));
  await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
  const post = calls.find((c) => c.method === "POST");
  expect(post?.path).toBe("/api/environments/e1/flags/new-checkout/scheduled-changes");
  expect(post?.body).toEqual({ scheduled_at: toRfc3339Local("2099-03-01T08:15"), patch: { rollout_percentage: 25 } });
  expect(await screen.findByText(/Scheduled “Rollout 25%” for new-checkout/)).toBeInTheDocument();
});

test("local validation blocks bad input; the server's 422 lands next to its field", async () => {
  const { calls } = renderScreen(<Schedules />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/flags/new-checkout/scheduled-changes": {
        status: 422,
        body: { error: "scheduled_at: is in the past", details: [{ field: "scheduled_at", message: "is in the past" }] },
      },
    }),
  });
  await screen.findByRole("option", { name: /new-checkout/ });
  await userEvent.selectOptions(screen.getByLabelText("Change"), "custom");
  fireEvent.change(screen.getByLabelText("Merge patch"), { target: { value: "{oops" } });
  await userEvent.click(screen.getByRole("button", { name: "Schedule change" }));
  expect(screen.getByText("Choose a flag.")).toBeInTheDocument();
  expect(screen.getByText("This is not valid JSON.")).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);

  await userEvent.selectOptions(screen.getByLabelText("Flag"), "new-checkout");
  fireEvent.change(screen.getByLabelText("Merge patch"), { target: { value: '{"is_enabled": true}' } });
  await userEvent.click(screen.getByRole("button", { name: "Schedule change" }));
  expect(await screen.findByText("is in the past")).toBeInTheDocument();
  expect(screen.getByLabelText("When")).toHaveAttribute("aria-invalid", "true");
});

test("deleting a pending change asks first", async () => {
  const { calls } = renderScreen(<Schedules />, {
    url,
    pattern,
    routes: routes({ [`DELETE /api/environments/e1/scheduled-changes/${pendingChange.id}`]: { status: 204 } }),
  });
  const row = await screen.findByRole("row", { name: /new-checkout/ });
  await userEvent.click(within(row).getByRole("button", { name: /Delete scheduled change to new-checkout/ }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete" }));
  await waitFor(() => expect(calls.some((c) => c.method === "DELETE")).toBe(true));
  expect(await screen.findByText("Deleted the scheduled change to new-checkout.")).toBeInTheDocument();
});

test("an environment that requires approval offers no schedule form, and says why", async () => {
  renderScreen(<Schedules />, {
    url: "/projects/p1/envs/e2/schedules",
    pattern,
    routes: {
      ...scopeRoutes(reviewer),
      "GET /api/environments/e2/scheduled-changes": [{ ...pendingChange, environment_id: "e2" }],
      "GET /api/environments/e2/flags": [flag({ key: "new-checkout", environment_id: "e2" })],
    },
  });
  expect(await screen.findByText(/Staging requires approval, so changes cannot be scheduled here/)).toBeInTheDocument();
  expect(screen.queryByRole("button", { name: "Schedule change" })).not.toBeInTheDocument();
  expect(await screen.findByText("new-checkout")).toBeInTheDocument(); // the pending change is still listed
});
