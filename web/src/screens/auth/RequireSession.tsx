import { Navigate, Outlet, useLocation } from "react-router";
import { ErrorBanner, Loading } from "../../components/ui";
import { useMe, useWorkspace } from "../../lib/session";

// RequireSession sends visitors to the setup wizard before the first admin
// exists and to the login page when they are not signed in.
export function RequireSession() {
  const workspace = useWorkspace();
  const me = useMe();
  const location = useLocation();
  if (workspace.isPending || me.isPending) return <Loading />;
  if (workspace.error) return <ErrorBanner error={workspace.error} />;
  if (!workspace.data.is_setup_complete) return <Navigate to="/setup" replace />;
  if (me.error) return <ErrorBanner error={me.error} />;
  if (!me.data) {
    const next = location.pathname + location.search;
    return <Navigate to={`/login${next !== "/" ? `?next=${encodeURIComponent(next)}` : ""}`} replace />;
  }
  return <Outlet />;
}
