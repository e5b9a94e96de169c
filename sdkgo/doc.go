// Package sdkgo is the Switchyard Go SDK: it keeps the flags of one
// environment in memory, follows their changes over the server's stream,
// and evaluates flags locally, in process, with no network call per
// evaluation.
//
//	client, err := sdkgo.New(ctx, os.Getenv("SWITCHYARD_SDK_KEY"), sdkgo.WithBaseURL("https://flags.example.com"))
//	if err != nil && !errors.Is(err, sdkgo.ErrNotReady) {
//		log.Fatal(err)
//	}
//	defer client.Close(context.Background())
//	if client.Bool("new-checkout", user.ID, map[string]any{"plan": user.Plan}, false) { … }
//
// The client connects to /stream with the SDK key, installs the flags when
// the bootstrap completes (`ready`), applies live updates by version,
// reconnects with jittered exponential backoff, and after three failed
// reconnects polls /flags/snapshot (with ETag) until the stream is back.
// Each evaluation is reported exactly once: as an impression the first time
// the client sees its (flag, user, value) within a bounded memory
// (WithExposureMemory), otherwise as a count in a summary; Track records
// goal events. All are batched in the background through bounded queues
// that drop (and count) rather than block. Attributes never leave the
// process.
//
// The evaluator lives in the subpackage eval, the OpenFeature provider in
// openfeature. Like eval, this package imports only the standard library
// and murmur3, never server code; boundary_test.go enforces that.
package sdkgo
