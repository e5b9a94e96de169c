package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// A project is created with its slug and seeded environments, imports by
// id, and follows a rename with its slug.
func TestAccProject(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: `resource "switchyard_project" "p" { name = "Acceptance Shop" }`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("switchyard_project.p", tfjsonpath.New("slug"), knownvalue.StringExact("acceptance-shop")),
				statecheck.ExpectKnownValue("switchyard_project.p", tfjsonpath.New("environment_ids"), knownvalue.MapSizeExact(3)),
			},
		}, {
			ResourceName:      "switchyard_project.p",
			ImportState:       true,
			ImportStateVerify: true,
		}, {
			Config: `resource "switchyard_project" "p" { name = "Acceptance Store" }`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("switchyard_project.p", tfjsonpath.New("slug"), knownvalue.StringExact("acceptance-store")),
			},
		}},
	})
}
