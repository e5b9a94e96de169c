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
    // Keeps the first load honest: the budget is 300 KB of gzipped JS (docs/dashboard.md).
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: {
      "/api": "http://127.0.0.1:3000",
      "/stream": "http://127.0.0.1:3000",
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
