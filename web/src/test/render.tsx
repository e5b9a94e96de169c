// Component-test harness: renders a screen inside the real providers and
// router, with the API answered by a table of routes instead of a server.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { MemoryRouter, Route, Routes } from "react-router";
import { newApi } from "../api/client";
import { ApiProvider } from "../api/context";

export type Call = { method: string; path: string; search: string; body: unknown; headers: Headers };
export type Reply = { status?: number; body?: unknown } | unknown;
// Routes maps "METHOD /path" (no query) to a reply or a function of the call.
export type Routes = Record<string, Reply | ((call: Call) => Reply)>;

function isReply(v: unknown): v is { status?: number; body?: unknown } {
  return typeof v === "object" && v !== null && ("status" in v || "body" in v);
}

export function fakeFetch(routes: Routes, calls: Call[]): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(String(input), init);
    const url = new URL(request.url);
    const text = await request.text();
    const call: Call = {
      method: request.method,
      path: url.pathname,
      search: url.search,
      body: text ? JSON.parse(text) : undefined,
      headers: request.headers,
    };
    calls.push(call);
    const route = routes[`${call.method} ${call.path}`];
    if (route === undefined) {
      return new Response(JSON.stringify({ error: `no fake route for ${call.method} ${call.path}` }), { status: 404 });
    }
    const reply = typeof route === "function" ? (route as (c: Call) => Reply)(call) : route;
    const { status = 200, body } = isReply(reply) ? reply : { status: 200, body: reply };
    if (status === 204) return new Response(null, { status });
    return new Response(JSON.stringify(body ?? null), { status, headers: { "Content-Type": "application/json" } });
  };
}

// renderScreen renders ui at url, matched by pattern (for useParams), e.g.
// renderScreen(<FlagList />, { url: "/projects/p1/envs/e1/flags", pattern: "/projects/:projectId/envs/:envId/flags", routes }).
export function renderScreen(
  ui: ReactElement,
  { url, pattern = url, routes = {} }: { url: string; pattern?: string; routes?: Routes },
) {
  const calls: Call[] = [];
  const api = newApi({ baseUrl: "http://test", fetch: fakeFetch(routes, calls) });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  const result = render(
    <ApiProvider api={api}>
      <QueryClientProvider client={queryClient}>
        <MemoryRouter initialEntries={[url]}>
          <Routes>
            <Route path={pattern} element={ui} />
            <Route path="*" element={<div data-testid="navigated" />} />
          </Routes>
        </MemoryRouter>
      </QueryClientProvider>
    </ApiProvider>,
  );
  return { ...result, calls, queryClient };
}
