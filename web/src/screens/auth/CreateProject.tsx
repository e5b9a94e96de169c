import { useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ErrorBanner, Field, SecretOnce } from "../../components/ui";
import { envPath, keys } from "../../lib/session";

// CreateProject creates a project (workspace admins) and shows the
// Production SDK key the server creates with it, once.
export function CreateProject({ onDone }: { onDone?: () => void }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Schemas["Project"] | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const project = await unwrap(api.POST("/api/projects", { body: { name } }));
      await queryClient.invalidateQueries({ queryKey: keys.projects });
      setCreated(project);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (created) {
    const env = created.environments[0];
    return (
      <div>
        {created.sdk_key && <SecretOnce label={`Production SDK key of ${created.name}`} secret={created.sdk_key.key} />}
        <Button
          variant="primary"
          onClick={() => {
            onDone?.();
            if (env) navigate(envPath(created.id, env.id, "flags"));
          }}
        >
          Open {created.name}
        </Button>
      </div>
    );
  }
  return (
    <form onSubmit={submit} noValidate>
      <ErrorBanner error={error} />
      <Field label="Project name" error={fieldErrorOf(error, "name")}>
        {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />}
      </Field>
      <Button type="submit" variant="primary" busy={busy} disabled={!name.trim()}>
        Create project
      </Button>
    </form>
  );
}
