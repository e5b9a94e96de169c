// Package notify owns Switchyard's notifications
// (docs/reference/notifications.md; docs/governance.md), from the change that
// causes one to the log of its delivery:
//
//   - The outbox: Enqueue writes one row per enabled webhook and chat
//     integration of an environment inside the caller's transaction (core's
//     flag, change-request and scheduled-change operations), so a notification
//     commits or rolls back with its change and nothing is sent before the
//     commit.
//   - Delivery: Service.DeliverNotifications claims due rows under a lease
//     that it renews while their sends are in flight, makes one attempt
//     each, logs every attempt, and removes the row or schedules its retry
//     (DefaultBackoff). Several instances may deliver at once; the loop that
//     calls it lives in server/worker.
//   - Targets: Service's webhook and chat-integration operations (list,
//     create, patch, delete, delivery log, test message), authorized through
//     server/access.
//   - Senders: Client renders and sends one attempt at a time, HMAC-SHA256
//     signed webhook payloads and chat alerts (Slack, Microsoft Teams), and
//     reports what happened in a Result.
package notify
