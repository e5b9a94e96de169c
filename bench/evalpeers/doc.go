// Package evalpeers benchmarks Switchyard's evaluator (sdkgo/eval) side by side with
// LaunchDarkly's Go evaluator on equivalent flags. It is a module of its own so that the
// comparison's dependencies never enter the product's go.mod. Run it with `make bench-eval`.
package evalpeers
