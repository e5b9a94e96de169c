// The dashboard's API client: openapi-fetch typed by schema.gen.ts, which
// openapi-typescript generates from api/openapi.yaml (`npm run generate`).
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.gen";

export type Schemas = components["schemas"];
export type Api = ReturnType<typeof newApi>;

// Cookie-authenticated mutations must carry this header (CSRF rule, 403 without).
const serviceRequest: Middleware = {
  onRequest({ request }) {
    if (request.method !== "GET" && request.method !== "HEAD") {
      request.headers.set("X-Service-Request", "true");
    }
    return request;
  },
};

export function newApi(options: { baseUrl?: string; fetch?: typeof fetch } = {}) {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? "",
    credentials: "same-origin",
    fetch: options.fetch,
  });
  client.use(serviceRequest);
  return client;
}

export type ErrorDetail = Schemas["ErrorDetail"];

// ApiError is every non-2xx answer: the server's message, its field details
// (422), and the login extras (attempts_remaining, retry_after_seconds).
export class ApiError extends Error {
  readonly status: number;
  readonly details: ErrorDetail[];
  readonly body: Record<string, unknown>;

  constructor(status: number, body: unknown) {
    const obj = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    super(typeof obj.error === "string" ? obj.error : `request failed (${status})`);
    this.status = status;
    this.body = obj;
    this.details = Array.isArray(obj.details) ? (obj.details as ErrorDetail[]) : [];
  }

  // fieldError is the message for one field, matching "field" or "field.sub"/"field[0]".
  fieldError(field: string): string | undefined {
    return this.details.find((d) => isUnder(d.field, field))?.message;
  }
}

// isUnder: does a detail's field path ("rules[0].values") belong to field ("rules")?
export function isUnder(path: string, field: string): boolean {
  return path === field || path.startsWith(field + ".") || path.startsWith(field + "[");
}

export function isForbidden(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 403;
}

// fieldErrorOf is the server's message for one form field, if err is an ApiError.
export function fieldErrorOf(err: unknown, field: string): string | undefined {
  return err instanceof ApiError ? err.fieldError(field) : undefined;
}

type Result<T> = { data?: T; error?: unknown; response: Response };

// unwrap turns an openapi-fetch result into its data or a thrown ApiError.
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, error);
  return data as T;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
