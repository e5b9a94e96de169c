// Command quickstart evaluates a flag with the Switchyard Go SDK.
//
//	make run                      # in the repository root; note the sdk_key it logs
//	SWITCHYARD_SDK_KEY=sk_live_… go run ./sdkgo/examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/switchyard/switchyard/sdkgo"
)

func main() {
	key := os.Getenv("SWITCHYARD_SDK_KEY")
	baseURL := os.Getenv("SWITCHYARD_URL")
	if baseURL == "" {
		baseURL = "http://localhost:3000"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	client, err := sdkgo.New(ctx, key, sdkgo.WithBaseURL(baseURL))
	if errors.Is(err, sdkgo.ErrNotReady) {
		log.Printf("no flags yet (is the server at %s?); serving defaults meanwhile", baseURL)
	} else if err != nil {
		log.Fatal(err)
	}
	defer client.Close(context.Background())

	flag := "new-checkout"
	if len(os.Args) > 1 {
		flag = os.Args[1]
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		on := client.Bool(flag, "user-17", map[string]any{"plan": "pro"}, false)
		d := client.Detail(flag, "user-17", map[string]any{"plan": "pro"})
		fmt.Printf("%s for user-17: %v (%s); %d flags, %s\n", flag, on, d.Reason, client.Stats().Flags, client.Stats().State)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
