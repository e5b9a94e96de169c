// Package notify delivers Switchyard's notifications: signed webhook
// payloads and chat alerts (Slack, Microsoft Teams). It renders and sends one
// attempt at a time and reports what happened; the outbox in server/core
// decides when to retry and logs every attempt (docs/governance.md).
package notify
