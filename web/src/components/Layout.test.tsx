import { screen } from "@testing-library/react";
import { me, scopeRoutes } from "../test/fixtures";
import { renderScreen } from "../test/render";
import { Layout } from "./Layout";

test("workspace admins find Users, Single sign-on and SCIM provisioning in the navigation", async () => {
  renderScreen(<Layout />, { url: "/admin/sso", routes: scopeRoutes() });
  const nav = screen.getByRole("navigation", { name: "Sections" });
  expect(await screen.findByRole("link", { name: "Single sign-on" })).toHaveAttribute("href", "/admin/sso");
  expect(screen.getByRole("link", { name: "Users" })).toHaveAttribute("href", "/admin/users");
  expect(screen.getByRole("link", { name: "SCIM provisioning" })).toHaveAttribute("href", "/admin/scim");
  expect(nav).toContainElement(screen.getByRole("link", { name: "Single sign-on" }));
});

test("others do not", async () => {
  renderScreen(<Layout />, { url: "/account/tokens", routes: scopeRoutes({ ...me, role: "editor" }) });
  expect(await screen.findByRole("link", { name: "Access tokens" })).toBeInTheDocument();
  await screen.findByText("Ada");
  expect(screen.queryByRole("link", { name: "Users" })).not.toBeInTheDocument();
  expect(screen.queryByRole("link", { name: "Single sign-on" })).not.toBeInTheDocument();
  expect(screen.queryByRole("link", { name: "SCIM provisioning" })).not.toBeInTheDocument();
});
