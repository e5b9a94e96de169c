import { useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { ApiError, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ErrorBanner, Field, Loading } from "../../components/ui";
import { keys, useWorkspace } from "../../lib/session";

// loginMessage turns the server's login failures into what a person needs:
// how many tries are left, or when the lockout ends.
export function loginMessage(err: unknown, now: Date = new Date()): string | null {
  if (!(err instanceof ApiError)) return null;
  if (err.status === 429 && typeof err.body.retry_after_seconds === "number") {
    const secs = err.body.retry_after_seconds;
    const at = new Date(now.getTime() + secs * 1000);
    const mins = Math.ceil(secs / 60);
    return `Too many failed attempts. This account is locked; try again in ${mins} minute${mins === 1 ? "" : "s"} (at ${at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}).`;
  }
  if (err.status === 401 && typeof err.body.attempts_remaining === "number") {
    const n = err.body.attempts_remaining;
    return `Wrong email or password. ${n} attempt${n === 1 ? "" : "s"} left before the account is locked.`;
  }
  return null;
}

export function Login() {
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const workspace = useWorkspace();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (workspace.isPending) return <Loading />;
  if (workspace.data && !workspace.data.is_setup_complete) return <Navigate to="/setup" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await unwrap(api.POST("/api/auth/login", { body: { email, password } }));
      queryClient.setQueryData(keys.me, me);
      const next = params.get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : "/", { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const friendly = loginMessage(error);
  return (
    <main className="auth-page">
      <form className="auth-card" onSubmit={submit} noValidate>
        <h1>Sign in to {workspace.data?.workspace_name ?? "Switchyard"}</h1>
        {friendly ? (
          <div className="banner banner-error" role="alert">
            {friendly}
          </div>
        ) : (
          <ErrorBanner error={error} />
        )}
        <Field label="Email">
          {(p) => <input {...p} type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />}
        </Field>
        <Field label="Password">
          {(p) => (
            <input {...p} type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
          )}
        </Field>
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
