// Routes. Every screen but the sign-in pages is code-split: the first load
// carries only the shell (docs/dashboard.md has the budget).
import { lazy, Suspense, type ReactNode } from "react";
import { Navigate, Route, Routes } from "react-router";
import { Loading } from "./components/ui";
import { Layout } from "./components/Layout";
import { Home } from "./screens/auth/Home";
import { Login } from "./screens/auth/Login";
import { Setup } from "./screens/auth/Setup";
import { RequireSession } from "./screens/auth/RequireSession";

const FlagList = lazy(() => import("./screens/flags/FlagList"));
const FlagEditor = lazy(() => import("./screens/flags/FlagEditor"));
const FlagDiff = lazy(() => import("./screens/flags/FlagDiff"));
const Segments = lazy(() => import("./screens/segments/Segments"));
const ChangeRequests = lazy(() => import("./screens/governance/ChangeRequests"));
const Schedules = lazy(() => import("./screens/governance/Schedules"));
const Audit = lazy(() => import("./screens/governance/Audit"));
const Integrations = lazy(() => import("./screens/governance/Integrations"));
const Experiments = lazy(() => import("./screens/measurement/Experiments"));
const ExperimentDetail = lazy(() => import("./screens/measurement/ExperimentDetail"));
const Impressions = lazy(() => import("./screens/measurement/Impressions"));
const Releases = lazy(() => import("./screens/releases/Releases"));
const ReleaseDetail = lazy(() => import("./screens/releases/ReleaseDetail"));
const StartRelease = lazy(() => import("./screens/releases/StartRelease"));
const SdkKeys = lazy(() => import("./screens/admin/SdkKeys"));
const Members = lazy(() => import("./screens/admin/Members"));
const EnvSettings = lazy(() => import("./screens/admin/EnvSettings"));
const Tokens = lazy(() => import("./screens/admin/Tokens"));
const Users = lazy(() => import("./screens/admin/Users"));
const Sso = lazy(() => import("./screens/admin/Sso"));
const Scim = lazy(() => import("./screens/admin/Scim"));
const AuditTrail = lazy(() => import("./screens/audit/AuditTrail"));
// Swagger UI is large: it is fetched only when /api/docs opens.
const ApiDocs = lazy(() => import("./screens/docs/ApiDocs"));

function Screen({ children }: { children: ReactNode }) {
  return <Suspense fallback={<Loading />}>{children}</Suspense>;
}

export function App() {
  return (
    <Routes>
      <Route path="/setup" element={<Setup />} />
      <Route path="/login" element={<Login />} />
      {/* Public, like the document it renders (GET /api/openapi.json). */}
      <Route path="/api/docs" element={<Screen><ApiDocs /></Screen>} />
      <Route element={<RequireSession />}>
        <Route path="/" element={<Home />} />
        <Route element={<Layout />}>
          <Route path="/account/tokens" element={<Screen><Tokens /></Screen>} />
          <Route path="/admin/users" element={<Screen><Users /></Screen>} />
          <Route path="/admin/sso" element={<Screen><Sso /></Screen>} />
          <Route path="/admin/scim" element={<Screen><Scim /></Screen>} />
          <Route path="/audit" element={<Screen><AuditTrail /></Screen>} />
          <Route path="/projects/:projectId/envs/:envId">
            <Route index element={<Navigate to="flags" replace />} />
            <Route path="flags" element={<Screen><FlagList /></Screen>} />
            <Route path="flags/new" element={<Screen><FlagEditor /></Screen>} />
            <Route path="flags/:key" element={<Screen><FlagEditor /></Screen>} />
            <Route path="flags/:key/releases/new" element={<Screen><StartRelease /></Screen>} />
            <Route path="releases" element={<Screen><Releases /></Screen>} />
            <Route path="releases/:id" element={<Screen><ReleaseDetail /></Screen>} />
            <Route path="diff" element={<Screen><FlagDiff /></Screen>} />
            <Route path="segments" element={<Screen><Segments /></Screen>} />
            <Route path="change-requests" element={<Screen><ChangeRequests /></Screen>} />
            <Route path="schedules" element={<Screen><Schedules /></Screen>} />
            <Route path="experiments" element={<Screen><Experiments /></Screen>} />
            <Route path="experiments/:key" element={<Screen><ExperimentDetail /></Screen>} />
            <Route path="impressions" element={<Screen><Impressions /></Screen>} />
            <Route path="audit" element={<Screen><Audit /></Screen>} />
            <Route path="integrations" element={<Screen><Integrations /></Screen>} />
            <Route path="keys" element={<Screen><SdkKeys /></Screen>} />
            <Route path="members" element={<Screen><Members /></Screen>} />
            <Route path="settings" element={<Screen><EnvSettings /></Screen>} />
          </Route>
        </Route>
      </Route>
      <Route path="*" element={<Navigate to="/" replace />} />
    </Routes>
  );
}
