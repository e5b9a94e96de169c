// Package release runs guarded releases: a boolean flag ramps through
// stages of rollout percentage while a background check compares, on each
// guardrail metric, the users who got the change (treatment) with those who
// did not (control), with an always-valid confidence interval, and rolls the
// flag back by itself when a metric is worse beyond its tolerance
// (docs/releases.md).
//
// A release is data in PostgreSQL. The check of a release runs in one
// transaction that holds the release's row, so several instances never run
// the same check twice, and a crash in the middle leaves nothing half done:
// the next instance runs it again. Its flag writes take core's write path.
package release
