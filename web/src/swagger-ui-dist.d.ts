// swagger-ui-dist ships no types; the API reference page uses only this.
declare module "swagger-ui-dist/swagger-ui-es-bundle.js" {
  type Request = { url: string; method: string; headers: Record<string, string> };
  type Options = {
    domNode: HTMLElement;
    url?: string;
    spec?: object;
    deepLinking?: boolean;
    validatorUrl?: string | null;
    docExpansion?: "list" | "full" | "none";
    defaultModelsExpandDepth?: number;
    filter?: boolean;
    tryItOutEnabled?: boolean;
    persistAuthorization?: boolean;
    displayRequestDuration?: boolean;
    requestInterceptor?: (req: Request) => Request;
    onComplete?: () => void;
  };
  const SwaggerUI: (options: Options) => unknown;
  export default SwaggerUI;
}
