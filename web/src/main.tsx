import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router";
import { newApi } from "./api/client";
import { ApiProvider } from "./api/context";
import { App } from "./App";
import { newQueryClient } from "./lib/queryClient";
import "./styles.css";

const queryClient = newQueryClient();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <ApiProvider api={newApi()}>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </ApiProvider>
  </StrictMode>,
);
