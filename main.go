// Command switchyard is the Switchyard feature-flag server and its command
// line. With no command it serves: all wiring lives in server/app, and
// configuration comes from environment variables. Commands live in cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchyard/switchyard/cli"
	"github.com/switchyard/switchyard/server/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	serve := func(ctx context.Context) error { return app.Run(ctx, os.Args[:1], os.LookupEnv, os.Stdout) }
	code := cli.Run(ctx, os.Args[1:], os.LookupEnv, os.Stdin, os.Stdout, os.Stderr, serve)
	stop()
	os.Exit(code)
}
