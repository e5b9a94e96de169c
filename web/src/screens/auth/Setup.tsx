import { useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Navigate } from "react-router";
import { fieldErrorOf, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ErrorBanner, Field, Loading } from "../../components/ui";
import { keys, useWorkspace } from "../../lib/session";

// Setup is the first-run wizard: name the workspace and create its first
// admin, who is then signed in.
export function Setup() {
  const api = useApi();
  const queryClient = useQueryClient();
  const workspace = useWorkspace();
  const [step, setStep] = useState<1 | 2>(1);
  const [form, setForm] = useState({ workspace_name: "", name: "", email: "", password: "" });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (workspace.isPending) return <Loading />;
  // Once set up (by us or anyone), "/" decides between the dashboard and login.
  if (workspace.data?.is_setup_complete) return <Navigate to="/" replace />;

  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const fieldError = (f: string) => fieldErrorOf(error, f);
  const short = form.password.length > 0 && form.password.length < 8;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (step === 1) {
      setStep(2);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const body = { ...form, workspace_name: form.workspace_name.trim() || undefined };
      const me = await unwrap(api.POST("/api/auth/setup", { body }));
      queryClient.setQueryData(keys.me, me);
      // Marking the workspace set up re-renders this page into a redirect to "/".
      await queryClient.invalidateQueries({ queryKey: keys.workspace });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={submit} noValidate>
        <p className="muted">Step {step} of 2</p>
        <h1>{step === 1 ? "Welcome to Switchyard" : "Create the first admin"}</h1>
        <ErrorBanner error={error} />
        {step === 1 ? (
          <Field label="Workspace name" hint="Shown on the sign-in page. You can keep the default.">
            {(p) => <input {...p} value={form.workspace_name} placeholder={workspace.data?.workspace_name} onChange={set("workspace_name")} maxLength={100} />}
          </Field>
        ) : (
          <>
            <Field label="Your name" error={fieldError("name")}>
              {(p) => <input {...p} value={form.name} onChange={set("name")} autoComplete="name" required maxLength={100} />}
            </Field>
            <Field label="Email" error={fieldError("email")}>
              {(p) => <input {...p} type="email" value={form.email} onChange={set("email")} autoComplete="username" required />}
            </Field>
            <Field label="Password" hint="At least 8 characters." error={fieldError("password") ?? (short ? "At least 8 characters." : undefined)}>
              {(p) => <input {...p} type="password" value={form.password} onChange={set("password")} autoComplete="new-password" required />}
            </Field>
          </>
        )}
        <div className="row">
          {step === 2 && (
            <Button onClick={() => setStep(1)} disabled={busy}>
              Back
            </Button>
          )}
          <Button type="submit" variant="primary" busy={busy}>
            {step === 1 ? "Continue" : "Create admin and sign in"}
          </Button>
        </div>
      </form>
    </main>
  );
}
