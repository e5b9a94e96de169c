// Package bus carries change notifications between Switchyard instances. An
// Event says that something changed, not what it became: receivers read the
// committed state themselves, so a late or reordered event can never install
// stale data (docs/reference/code-style.md, §6 Bus and hub). Every instance,
// the publisher included, receives through the bus, so there is one delivery
// path.
package bus

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
)

// Op is what happened.
type Op string

// The operations.
const (
	OpUpsert Op = "upsert" // a flag was created or changed; re-read it
	OpDelete Op = "delete" // a flag was deleted
	OpResync Op = "resync" // messages may have been lost; rebuild everything
	OpRevoke Op = "revoke" // a credential ended; Key names it (auth.CredentialRefs)

	// The instances' own messages (server/agree): a heartbeat that its
	// sender also hears back, a confirmation that a change has been
	// applied, and a farewell.
	OpPing  Op = "ping"
	OpAck   Op = "ack"
	OpLeave Op = "leave"
)

// Event is one change notification. Version is the flag's version after an
// upsert, so receivers can drop notifications older than what they hold.
//
// From and ID name the instance that published it and a number unique among
// its messages, so that the other instances can confirm they have applied
// it (OpAck, To the publisher); changes from the change log carry neither.
type Event struct {
	Op      Op        `json:"op"`
	EnvID   uuid.UUID `json:"env_id"`
	Key     string    `json:"key,omitempty"`
	Version int64     `json:"version,omitempty"`
	From    string    `json:"from,omitempty"`
	To      string    `json:"to,omitempty"`
	ID      uint64    `json:"id,omitempty"`
}

// Publisher is what writers need: publish after commit.
type Publisher interface {
	Publish(ctx context.Context, events ...Event) error
}

// Bus publishes events to every subscriber of every instance.
type Bus interface {
	Publisher
	// Subscribe registers fn for every event, from any instance, until
	// cancel is called. fn runs on the bus's delivery goroutine: it must
	// not block.
	Subscribe(fn func(Event)) (cancel func())
	// Close stops delivery.
	Close() error
}

// PublishCommitted announces changes a writer has committed. A failure is
// logged, never returned: the write is durable, and every instance reads
// what the bus lost from the change log (docs/reference/stream.md, Resync).
// Events without an Op (a write that published nothing) are left out; a
// nil pub publishes nothing.
func PublishCommitted(ctx context.Context, pub Publisher, logger *slog.Logger, events ...Event) {
	out := events[:0:0]
	for _, e := range events {
		if e.Op != "" {
			out = append(out, e)
		}
	}
	if pub == nil || len(out) == 0 {
		return
	}
	if err := pub.Publish(context.WithoutCancel(ctx), out...); err != nil {
		logger.WarnContext(ctx, "publish change", "err", err.Error(), "events", len(out))
	}
}
