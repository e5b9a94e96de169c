// Command terraform-provider-switchyard is the Terraform and OpenTofu
// provider of Switchyard (docs/terraform.md): projects, environments, flags,
// segments, SDK keys, members, webhooks, chat alerts and single sign-on as
// resources, over the API's typed client.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/switchyard/switchyard/terraform/internal/provider"
)

// version is set at release builds (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
