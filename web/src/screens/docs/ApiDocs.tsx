// The browsable API reference at /api/docs: Swagger UI (swagger-ui-dist,
// bundled, no CDN) renders the server's own document, GET /api/openapi.json.
// The renderer is imported only here and this screen is lazy, so it is a
// chunk of its own that the dashboard's first load never downloads.
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router";
import "swagger-ui-dist/swagger-ui.css";
import SwaggerUI from "swagger-ui-dist/swagger-ui-es-bundle.js";
import "./docs.css";

type Operation = { tags?: string[] };
type OpenAPIDocument = { paths?: Record<string, Record<string, Operation | unknown>>; tags?: { name: string }[] };

// readerView is the document as a reader browses it: the "handwritten" tag
// only tells the code generator which routes are written by hand, so an
// operation that has a tag of its own is listed there alone, not twice.
// (Listed twice, the 20-odd hand-written operations also push Swagger UI past
// the number of operations it renders in one list.)
export function readerView(spec: OpenAPIDocument): OpenAPIDocument {
  for (const item of Object.values(spec.paths ?? {})) {
    for (const op of Object.values(item)) {
      const o = op as Operation;
      if (o && Array.isArray(o.tags) && o.tags.length > 1) o.tags = o.tags.filter((t) => t !== "handwritten");
    }
  }
  return spec;
}

function render(host: HTMLElement, spec: OpenAPIDocument, done: () => void) {
  SwaggerUI({
    domNode: host,
    spec,
    deepLinking: false, // true nests a link inside each operation's button (axe: nested-interactive)
    validatorUrl: null, // never send the document to an outside validator: works offline
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    filter: true,
    displayRequestDuration: true,
    // "Try it out" runs with the signed-in session (same origin), so
    // mutations carry the CSRF header the API requires of cookie sessions.
    requestInterceptor: (req) => {
      if (req.method !== "GET" && req.method !== "HEAD") req.headers["X-Service-Request"] = "true";
      return req;
    },
    onComplete: done,
  });
}

export default function ApiDocs() {
  const root = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (!root.current) return;
    // A fresh host per mount: Swagger UI renders with a React of its own.
    const host = document.createElement("div");
    root.current.appendChild(host);
    document.title = "API reference · Switchyard";
    let cancelled = false;
    void fetch("/api/openapi.json")
      .then((r) => r.json())
      .then((spec: OpenAPIDocument) => {
        if (!cancelled) render(host, readerView(spec), () => setReady(true));
      });
    return () => {
      cancelled = true;
      host.remove();
      document.title = "Switchyard";
    };
  }, []);
  return (
    <div className="api-docs">
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Switchyard home">
          Switchyard
        </Link>
        <h1 className="api-docs-title">API reference</h1>
        <div className="topbar-end">
          <a href="/api/openapi.json" download="switchyard-openapi.json">
            openapi.json
          </a>
          <Link to="/">Back to the dashboard</Link>
        </div>
      </header>
      <main id="main" aria-busy={!ready}>
        {!ready && <p className="loading">Loading the API reference…</p>}
        <div ref={root} />
      </main>
    </div>
  );
}
