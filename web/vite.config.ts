/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The Go server serves public/ (PUBLIC_DIR) with an SPA fallback and a
// year-long cache for the content-hashed files under /assets/.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: "../public",
    emptyOutDir: true,
    // The first load is held to 300 KB of gzipped JS by scripts/budget.mjs
    // (docs/dashboard.md). This limit only flags a lazy chunk grown past the
    // largest one we accept: the API reference's Swagger UI (about 1.55 MB
    // minified, 430 KB gzipped), downloaded only when /api/docs opens.
    chunkSizeWarningLimit: 1600,
  },
  server: {
    proxy: {
      "/api": {
        target: "http://127.0.0.1:3000",
        // /api/docs is a dashboard page (the API reference), not an API route.
        bypass: (req) => (req.url?.split("?")[0] === "/api/docs" ? "/index.html" : undefined),
      },
      "/stream": "http://127.0.0.1:3000",
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    // Component tests that type through whole forms take seconds of CPU;
    // on a loaded two-core machine the default 5 s cuts the slowest short.
    testTimeout: 20_000,
  },
});
