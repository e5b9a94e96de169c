// The flag list of an environment without flags. Someone who may write flags
// gets New flag first, then the two ways a new project goes on: connect an app
// with an SDK key of this environment, or start from a file of flags that the
// command line applies. Everyone else reads that there are no flags yet.
import { useId } from "react";
import { Link } from "react-router";
import type { Schemas } from "../../api/client";
import { Snippets } from "../../components/snippets";
import { Empty } from "../../components/ui";
import { envPath } from "../../lib/session";
import { snippetsFor, type Snippet } from "../admin/snippets";

// What the start-up code shows until a real key replaces it: the full key is
// shown once, on the SDK keys screen, with the same code filled in.
const SERVER_KEY = "sk_live_…";
const CLIENT_KEY = "pk_live_…";

// A slug is lowercase ASCII letters, digits and hyphens; one that YAML would
// read as another type (2024, yes, null) is written quoted.
const PLAIN = /^[a-z][a-z0-9-]*$/;
const NOT_STRINGS = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);
const yamlString = (s: string) => (PLAIN.test(s) && !NOT_STRINGS.has(s) ? s : JSON.stringify(s));

// flagsFile is the smallest file `switchyard apply -f` takes: one flag in
// this project's environment.
export function flagsFile(projectSlug: string, envSlug: string): string {
  return `version: 1
projects:
  - slug: ${yamlString(projectSlug)}
    environments:
      - slug: ${yamlString(envSlug)}
        flags:
          - key: new-checkout
            is_enabled: true
            rollout_percentage: 10
`;
}

export function fileSnippets(projectSlug: string, envSlug: string): Snippet[] {
  return [
    { id: "flags-yaml", title: "flags.yaml", language: "yaml", code: flagsFile(projectSlug, envSlug) },
    { id: "apply", title: "Command line", language: "sh", code: "switchyard apply -f flags.yaml\n" },
  ];
}

type Props = {
  projectId: string;
  envId: string;
  project?: Schemas["Project"];
  env?: Schemas["EnvironmentSummary"];
  canWrite: boolean;
};

export function FlagListEmpty({ projectId, envId, project, env, canWrite }: Props) {
  const connectId = useId();
  const fileId = useId();
  const where = env?.name ?? "this environment";
  if (!canWrite) {
    return (
      <Empty title="No flags yet">
        <p>{where} has no flags yet. They show here as soon as someone creates one.</p>
      </Empty>
    );
  }
  return (
    <div className="flags-empty">
      <Empty title="No flags yet">
        <p>Create the first flag of {where}, then connect an app to read it — or start from a file.</p>
        <Link className="btn btn-primary" to={envPath(projectId, envId, "flags/new")}>
          New flag
        </Link>
      </Empty>
      {/* The slugs come from the project list, which the shell has already loaded. */}
      {project && env && (
        <div className="next-steps">
          <section className="card next-step" aria-labelledby={connectId}>
            <h3 id={connectId}>Connect an app</h3>
            <p>
              Your code reads the flags of {env.name} with an SDK key of this environment: a <strong>server key</strong>{" "}
              (<code>sk_live_…</code>) for back-end services, or a <strong>client key</strong> (<code>pk_live_…</code>) for
              browsers and mobile apps. A project admin creates it under SDK keys, where it is shown once with this code
              filled in.
            </p>
            <Link className="btn btn-secondary" to={envPath(projectId, envId, "keys")}>
              Create an SDK key for {env.name}
            </Link>
            <details>
              <summary>Code for a server key (Go, Node.js)</summary>
              <Snippets snippets={snippetsFor("server", SERVER_KEY, window.location.origin)} />
            </details>
            <details>
              <summary>Code for a client key (browser)</summary>
              <Snippets snippets={snippetsFor("client", CLIENT_KEY, window.location.origin)} />
            </details>
          </section>
          <section className="card next-step" aria-labelledby={fileId}>
            <h3 id={fileId}>Start from a file</h3>
            <p>
              Describe the flags of {env.name} in a YAML file and apply it with the command line:
            </p>
            <Snippets snippets={fileSnippets(project.slug, env.slug)} />
            <p className="muted">See Flags as code in the documentation.</p>
          </section>
        </div>
      )}
    </div>
  );
}
