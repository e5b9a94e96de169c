import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { ApiError, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ErrorBanner, Field, Loading } from "../../components/ui";
import { keys, useWorkspace } from "../../lib/session";

// loginMessage turns the server's login failures into what a person needs:
// how many tries are left, when the lockout ends, or that the workspace
// signs people in through its identity provider.
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
  // password_login admins_only: the right password of anyone but a workspace
  // admin is refused (docs/sso.md).
  if (err.status === 403 && err.body.code === "SSO_REQUIRED") {
    return "Your workspace requires single sign-on. Use “Sign in with SSO”.";
  }
  return null;
}

// The codes a failed single sign-on brings back as /login?error=<code> (docs/sso.md, Errors).
const SSO_ERRORS = new Map<string, string>([
  ["sso_state", "The sign-in took too long or was started elsewhere. Try again."],
  ["sso_token", "The identity provider's answer could not be verified. Try again; if it keeps failing, ask a workspace admin."],
  ["sso_domain", "Your email domain is not allowed to sign in here."],
  ["sso_not_provisioned", "You have no account here yet, and accounts are not created automatically. Ask a workspace admin."],
  ["sso_deactivated", "Your account is deactivated. Ask a workspace admin."],
]);

// ssoErrorMessage words a ?error= code; a code it does not know gets a general message.
export function ssoErrorMessage(code: string | null): string | null {
  if (!code) return null;
  return SSO_ERRORS.get(code) ?? "Single sign-on did not complete. Try again; if it keeps failing, ask a workspace admin.";
}

// safeNext is ?next when it is a path on this origin, else null. "//host"
// and "/\host" are other hosts to a browser.
export function safeNext(next: string | null): string | null {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : null;
}

// ssoLoginHref is where "Sign in with SSO" leads: the server's login_url,
// which redirects to the identity provider, carrying ?next as `redirect`
// when it is safe (the server checks it again).
export function ssoLoginHref(loginUrl: string, next: string | null): string {
  const path = safeNext(next);
  if (!path) return loginUrl;
  return `${loginUrl}${loginUrl.includes("?") ? "&" : "?"}redirect=${encodeURIComponent(path)}`;
}

export function Login() {
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const workspace = useWorkspace();
  // An error (an older server, a network failure) reads as single sign-on off.
  const sso = useQuery({ queryKey: keys.ssoInfo, queryFn: () => unwrap(api.GET("/api/auth/sso")) });
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [passwordOpen, setPasswordOpen] = useState(false);
  const formId = useId();

  if (workspace.isPending || sso.isPending) return <Loading />;
  if (workspace.data && !workspace.data.is_setup_complete) return <Navigate to="/setup" replace />;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await unwrap(api.POST("/api/auth/login", { body: { email, password } }));
      queryClient.setQueryData(keys.me, me);
      navigate(safeNext(params.get("next")) ?? "/", { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const info = sso.data?.enabled ? sso.data : null;
  // Who is an admin is known only after signing in, so with admins_only the
  // password form waits behind a disclosure; the server refuses the others.
  const adminsOnly = info?.password_login === "admins_only";
  const showForm = !adminsOnly || passwordOpen;
  const ssoError = ssoErrorMessage(params.get("error"));
  const friendly = loginMessage(error);
  return (
    <main className="auth-page">
      <div className="auth-card">
        <h1>Sign in to {workspace.data?.workspace_name ?? "Switchyard"}</h1>
        {ssoError && (
          <div className="banner banner-error" role="alert">
            {ssoError}
          </div>
        )}
        {friendly ? (
          <div className="banner banner-error" role="alert">
            {friendly}
          </div>
        ) : (
          <ErrorBanner error={error} />
        )}
        {info && (
          // A plain link: the server answers with a redirect to the identity provider.
          <a className="btn btn-primary auth-sso" href={ssoLoginHref(info.login_url, params.get("next"))}>
            Sign in with SSO
          </a>
        )}
        {info && !adminsOnly && <p className="auth-or">or</p>}
        {adminsOnly && (
          <Button
            variant="ghost"
            className="auth-disclosure"
            aria-expanded={passwordOpen}
            aria-controls={passwordOpen ? formId : undefined}
            onClick={() => setPasswordOpen(!passwordOpen)}
          >
            Administrators: sign in with a password
          </Button>
        )}
        {showForm && (
          <form id={formId} className="auth-form" onSubmit={submit} noValidate>
            <Field label="Email">
              {(p) => <input {...p} type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />}
            </Field>
            <Field label="Password">
              {(p) => (
                <input {...p} type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
              )}
            </Field>
            <Button type="submit" variant={info ? "secondary" : "primary"} busy={busy}>
              Sign in
            </Button>
          </form>
        )}
      </div>
    </main>
  );
}
