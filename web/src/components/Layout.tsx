// The shell around every signed-in screen: project switcher, environment
// tabs in the environments' colours, the live-stream indicator, the user
// menu and the navigation.
import { useQueryClient } from "@tanstack/react-query";
import { useState, type CSSProperties } from "react";
import { Link, NavLink, Outlet, useLocation, useNavigate } from "react-router";
import { unwrap } from "../api/client";
import { useApi } from "../api/context";
import { envPath, isAdmin, useProjects, useScope } from "../lib/session";
import { useFlagStream, type StreamState } from "../lib/stream";
import { CreateProject } from "../screens/auth/CreateProject";
import { useAuditAccess } from "./history";
import { Modal } from "./ui";

const envNav: { to: string; label: string }[] = [
  { to: "flags", label: "Flags" },
  { to: "releases", label: "Releases" },
  { to: "segments", label: "Segments" },
  { to: "diff", label: "Compare & promote" },
  { to: "change-requests", label: "Change requests" },
  { to: "schedules", label: "Scheduled changes" },
  { to: "experiments", label: "Experiments" },
  { to: "impressions", label: "Impressions" },
  { to: "audit", label: "Audit log" },
  { to: "integrations", label: "Webhooks & chat" },
];

const projectNav: { to: string; label: string }[] = [
  { to: "keys", label: "SDK keys" },
  { to: "members", label: "Members" },
  { to: "settings", label: "Environments" },
];

// Workspace settings, for workspace admins.
const adminNav: { to: string; label: string }[] = [
  { to: "/admin/users", label: "Users" },
  { to: "/admin/sso", label: "Single sign-on" },
  { to: "/admin/scim", label: "SCIM provisioning" },
];

export function Layout() {
  const scope = useScope();
  const live = useFlagStream(scope.envId);
  const inEnv = Boolean(scope.projectId && scope.envId);
  // Workspace admins and project admins (the server says which).
  const readsAudit = useAuditAccess();
  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Switchyard home">
          Switchyard
        </Link>
        <ProjectSwitcher />
        {inEnv && <EnvTabs />}
        <div className="topbar-end">
          {inEnv && <LiveBadge state={live} />}
          <UserMenu />
        </div>
      </header>
      <div className="app-body">
        <nav className="sidenav" aria-label="Sections">
          {inEnv && (
            <>
              <ul>
                {envNav.map((n) => (
                  <li key={n.to}>
                    <NavLink to={envPath(scope.projectId, scope.envId, n.to)}>{n.label}</NavLink>
                  </li>
                ))}
              </ul>
              <h2 className="sidenav-title">Project</h2>
              <ul>
                {projectNav.map((n) => (
                  <li key={n.to}>
                    <NavLink to={envPath(scope.projectId, scope.envId, n.to)}>{n.label}</NavLink>
                  </li>
                ))}
              </ul>
            </>
          )}
          <h2 className="sidenav-title">You</h2>
          <ul>
            <li>
              <NavLink to="/account/tokens">Access tokens</NavLink>
            </li>
            {isAdmin(scope.me) &&
              adminNav.map((n) => (
                <li key={n.to}>
                  <NavLink to={n.to}>{n.label}</NavLink>
                </li>
              ))}
            {readsAudit && (
              <li>
                <NavLink to="/audit">Audit trail</NavLink>
              </li>
            )}
          </ul>
          <h2 className="sidenav-title">Help</h2>
          <ul>
            <li>
              <Link to="/api/docs">API reference</Link>
            </li>
          </ul>
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}

function LiveBadge({ state }: { state: StreamState }) {
  const text = state === "live" ? "Live" : state === "connecting" ? "Connecting…" : "Offline — reconnecting";
  return (
    <span className={`live live-${state}`} role="status" aria-live="polite" title="Flag changes arrive through /stream">
      <span className="live-dot" aria-hidden="true" />
      {text}
    </span>
  );
}

function ProjectSwitcher() {
  const projects = useProjects();
  const scope = useScope();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  if (!projects.data) return null;
  return (
    <div className="project-switcher">
      <label htmlFor="project-switcher" className="sr-only">
        Project
      </label>
      <select
        id="project-switcher"
        value={scope.projectId}
        onChange={(e) => {
          if (e.target.value === "__new") {
            setCreating(true);
            return;
          }
          const p = projects.data.find((x) => x.id === e.target.value);
          const env = p?.environments[0];
          if (p && env) navigate(envPath(p.id, env.id, "flags"));
        }}
      >
        {!scope.projectId && <option value="">Choose a project…</option>}
        {projects.data.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
        {isAdmin(scope.me) && <option value="__new">+ New project…</option>}
      </select>
      {creating && (
        <Modal title="New project" onClose={() => setCreating(false)}>
          <CreateProject onDone={() => setCreating(false)} />
        </Modal>
      )}
    </div>
  );
}

function EnvTabs() {
  const scope = useScope();
  const location = useLocation();
  if (!scope.project) return null;
  // Switching environment keeps the current screen (and flag).
  const rest = location.pathname.split(`/envs/${scope.envId}/`)[1] ?? "flags";
  return (
    <nav className="env-tabs" aria-label="Environments">
      {scope.project.environments.map((e) => (
        <NavLink
          key={e.id}
          to={envPath(scope.projectId, e.id, rest)}
          className={({ isActive }) => `env-tab${isActive || e.id === scope.envId ? " active" : ""}`}
          aria-current={e.id === scope.envId ? "page" : undefined}
          style={{ "--env-color": e.color } as CSSProperties}
        >
          <span className="env-dot" style={{ background: e.color }} aria-hidden="true" />
          {e.name}
        </NavLink>
      ))}
    </nav>
  );
}

function UserMenu() {
  const api = useApi();
  const scope = useScope();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return (
    <div className="user-menu">
      <span className="muted" title={scope.me?.email}>
        {scope.me?.name}
      </span>
      <button
        type="button"
        className="btn btn-ghost"
        onClick={async () => {
          await unwrap(api.POST("/api/auth/logout")).catch(() => undefined);
          queryClient.clear();
          navigate("/login");
        }}
      >
        Sign out
      </button>
    </div>
  );
}
