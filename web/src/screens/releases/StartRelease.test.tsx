import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { envUrl, flag, project, scopeRoutes } from "../../test/fixtures";
import { renderScreen } from "../../test/render";
import type { Schemas } from "../../api/client";
import StartRelease from "./StartRelease";
import { release } from "./testdata";
import { formToRequest, emptyForm, formatDuration, presetStages } from "./releaseform";

const at = envUrl("flags/:key/releases/new");
const url = "/projects/p1/envs/e1/flags/checkout/releases/new";

const eventKeys: Schemas["EventKeySummary"][] = [
  { event_key: "error", total: 40, unique_users: 30, last_seen: "2026-11-20T10:00:00Z" },
  { event_key: "purchase", total: 900, unique_users: 700, last_seen: "2026-11-20T10:00:00Z" },
];


function open(routes: Record<string, unknown> = {}, f = flag({ rollout_percentage: 100 })) {
  return renderScreen(<StartRelease />, {
    url,
    pattern: at.pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags/checkout": f,
      "GET /api/environments/e1/releases": [],
      "GET /api/environments/e1/events/keys": eventKeys,
      ...routes,
    },
  });
}

test("presets fill the stages; a custom ramp, metrics and advanced settings are sent as the API's body", async () => {
  const { calls } = open({ "POST /api/environments/e1/flags/checkout/releases": { status: 201, body: release() } });
  await screen.findByRole("heading", { name: /Start a guarded release of/ });
  // Careful is the default: five stages, 1 → 100.
  const pcts = () => screen.getAllByLabelText(/^Stage \d+ rollout %$/).map((i) => (i as HTMLInputElement).value);
  expect(pcts()).toEqual(["1", "5", "25", "50", "100"]);
  expect(screen.getByText(/1 % → 5 % → 25 % → 50 % → 100 % · 2 d 4 h in all/)).toBeInTheDocument();
  await userEvent.click(screen.getByRole("radio", { name: "Quick: 10 → 50 → 100 %" }));
  expect(pcts()).toEqual(["10", "50", "100"]);
  expect((screen.getByLabelText("Stage 1 duration unit") as HTMLSelectElement).value).toBe("minutes");

  // Editing a stage makes the ramp custom.
  await userEvent.click(screen.getByRole("button", { name: "Remove stage 3" }));
  fireEvent.change(screen.getByLabelText("Stage 1 duration"), { target: { value: "2" } });
  await userEvent.selectOptions(screen.getByLabelText("Stage 1 duration unit"), "seconds");
  fireEvent.change(screen.getByLabelText("Stage 2 duration"), { target: { value: "1" } });
  await userEvent.selectOptions(screen.getByLabelText("Stage 2 duration unit"), "days");
  expect(screen.getByRole("radio", { name: "Custom" })).toBeChecked();

  // Metrics from the environment's goal events; tolerance in percent.
  await userEvent.selectOptions(screen.getByLabelText("Metric 1 event"), "purchase");
  fireEvent.change(screen.getByLabelText("Metric 1 tolerance %"), { target: { value: "5" } });
  await userEvent.click(screen.getByRole("button", { name: "Add metric" }));
  expect((screen.getByLabelText("Metric 2 event") as HTMLSelectElement).value).toBe("error");
  await userEvent.selectOptions(screen.getByLabelText("Metric 2 kind"), "mean");
  await userEvent.selectOptions(screen.getByLabelText("Metric 2 bad direction"), "increase");
  fireEvent.change(screen.getByLabelText("Metric 2 tolerance %"), { target: { value: "0.5" } });

  // Advanced settings are folded away until opened.
  const details = screen.getByText("Advanced settings").closest("details")!;
  expect(details).not.toHaveAttribute("open");
  await userEvent.click(screen.getByText("Advanced settings"));
  fireEvent.change(screen.getByLabelText("Check interval (seconds)"), { target: { value: "1" } });
  fireEvent.change(screen.getByLabelText("Minimum users per arm"), { target: { value: "50" } });

  await userEvent.click(screen.getByRole("button", { name: "Start release" }));
  await screen.findByTestId("navigated");
  const post = calls.find((c) => c.method === "POST")!;
  expect(post.path).toBe("/api/environments/e1/flags/checkout/releases");
  expect(post.headers.get("X-Service-Request")).toBe("true");
  expect(post.body).toEqual({
    stages: [
      { percentage: 10, duration_seconds: 2 },
      { percentage: 50, duration_seconds: 86400 },
    ],
    metrics: [
      { event_key: "purchase", kind: "conversion", bad_direction: "decrease", tolerance: 0.05 },
      { event_key: "error", kind: "mean", bad_direction: "increase", tolerance: 0.005 },
    ],
    min_users: 50,
    check_interval_seconds: 1,
  });
});

test("problems found in the form are shown next to their fields and nothing is sent", async () => {
  const { calls } = open();
  await screen.findByRole("heading", { name: /Start a guarded release of/ });
  fireEvent.change(screen.getByLabelText("Stage 3 rollout %"), { target: { value: "5" } });
  fireEvent.change(screen.getByLabelText("Stage 1 duration"), { target: { value: "0" } });
  await userEvent.click(screen.getByText("Advanced settings"));
  fireEvent.change(screen.getByLabelText("Alpha"), { target: { value: "0.9" } });
  await userEvent.click(screen.getByRole("button", { name: "Start release" }));

  expect(screen.getByLabelText("Stage 3 rollout %")).toHaveAccessibleDescription("Must be more than the stage before (5 %).");
  expect(screen.getByLabelText("Stage 1 duration")).toHaveAccessibleDescription("A whole number, from 1 second to 30 days.");
  expect(screen.getByLabelText("Metric 1 event")).toHaveAccessibleDescription("Choose the goal event to watch.");
  expect(screen.getByLabelText("Alpha")).toHaveAccessibleDescription(/A number greater than 0 and at most 0.5./);
  expect(screen.getByText("Fix the 4 highlighted fields before starting.")).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);
});

test("the server's 422 details land next to the fields they name, the advanced ones opened", async () => {
  open({
    "POST /api/environments/e1/flags/checkout/releases": {
      status: 422,
      body: {
        error: "invalid release",
        details: [
          { field: "metrics[0].event_key", message: "must be 1 to 100 ASCII letters, digits, underscores or hyphens" },
          { field: "check_interval_seconds", message: "must be an integer from 1 to 86400" },
        ],
      },
    },
  });
  await screen.findByRole("heading", { name: /Start a guarded release of/ });
  await userEvent.selectOptions(screen.getByLabelText("Metric 1 event"), "purchase");
  await userEvent.click(screen.getByRole("button", { name: "Start release" }));
  await waitFor(() =>
    expect(screen.getByLabelText("Metric 1 event")).toHaveAccessibleDescription(
      "must be 1 to 100 ASCII letters, digits, underscores or hyphens",
    ),
  );
  expect(screen.getByText("Advanced settings").closest("details")).toHaveAttribute("open");
  expect(screen.getByLabelText("Check interval (seconds)")).toHaveAccessibleDescription(/must be an integer from 1 to 86400/);
  expect(screen.getByText("Check the fields marked above.")).toBeInTheDocument();
});

test("a key typed when the environment has no goal events yet", async () => {
  const { calls } = open({
    "GET /api/environments/e1/events/keys": [],
    "POST /api/environments/e1/flags/checkout/releases": { status: 201, body: release() },
  });
  await screen.findByText(/No goal event was reported in this environment yet/);
  await userEvent.type(screen.getByLabelText("Metric 1 event"), "signup");
  await userEvent.click(screen.getByRole("button", { name: "Start release" }));
  await screen.findByTestId("navigated");
  expect((calls.find((c) => c.method === "POST")!.body as Schemas["CreateReleaseRequest"]).metrics[0]!.event_key).toBe("signup");
});

test("a paused release of the flag is linked instead of a form", async () => {
  open({ "GET /api/environments/e1/releases": { body: [release({ status: "paused" })] } });
  const note = await screen.findByText(/A guarded release of this flag is paused/);
  expect(within(note).getByRole("link", { name: "Open the release" })).toHaveAttribute(
    "href",
    "/projects/p1/envs/e1/releases/11111111-1111-4111-8111-111111111111",
  );
  expect(screen.queryByRole("button", { name: "Start release" })).not.toBeInTheDocument();
});

test("a string flag cannot be released", async () => {
  open({}, flag({ flag_type: "string", default_value: "a", disabled_value: "b" }));
  await screen.findByText("Guarded releases ramp boolean flags; this one is a string flag.");
  expect(screen.queryByRole("button", { name: "Start release" })).not.toBeInTheDocument();
});

test("an environment that requires approval cannot start one", async () => {
  renderScreen(<StartRelease />, {
    url: "/projects/p1/envs/e2/flags/checkout/releases/new",
    pattern: at.pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e2/flags/checkout": flag({ environment_id: "e2" }),
      "GET /api/environments/e2/releases": [],
      "GET /api/environments/e2/events/keys": [],
    },
  });
  await screen.findByText(new RegExp(`${project.environments[1]!.name} requires approval`));
});

test("formToRequest and the duration words", () => {
  const form = { ...emptyForm(), metrics: [{ event_key: "purchase", kind: "conversion" as const, bad_direction: "decrease" as const, tolerance: "2" }] };
  expect(formToRequest(form)).toEqual({
    body: {
      stages: [
        { percentage: 1, duration_seconds: 3600 },
        { percentage: 5, duration_seconds: 3600 },
        { percentage: 25, duration_seconds: 7200 },
        { percentage: 50, duration_seconds: 86400 },
        { percentage: 100, duration_seconds: 86400 },
      ],
      metrics: [{ event_key: "purchase", kind: "conversion", bad_direction: "decrease", tolerance: 0.02 }],
    },
    errors: {},
  });
  const dup = { ...form, stages: presetStages("quick"), metrics: [...form.metrics, ...form.metrics] };
  expect(formToRequest(dup).errors).toEqual({ "metrics.1.event_key": "This event is already a metric of the release." });
  expect([2, 90, 3600, 5400, 86400 + 3600 * 4, 86400 * 30].map(formatDuration)).toEqual(["2 s", "1 min 30 s", "1 h", "1 h 30 min", "1 d 4 h", "30 d"]);
});
