import { Navigate } from "react-router";
import { ErrorBanner, Loading } from "../../components/ui";
import { envPath, useProjects } from "../../lib/session";
import { CreateProject } from "./CreateProject";

// Home opens the first project's default environment (listed first).
export function Home() {
  const projects = useProjects();
  if (projects.isPending) return <Loading />;
  if (projects.error) return <ErrorBanner error={projects.error} />;
  const project = projects.data[0];
  const env = project?.environments[0];
  if (project && env) return <Navigate to={envPath(project.id, env.id, "flags")} replace />;
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>No projects yet</h1>
        <p>You are not a member of any project. Create one, or ask an admin to add you.</p>
        <CreateProject />
      </div>
    </main>
  );
}
