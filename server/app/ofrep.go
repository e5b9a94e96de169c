package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/ofrep"
	"github.com/switchyard/switchyard/server/stream"
)

// hubFlags gives remote evaluation (server/ofrep) the stream hub's
// segment-expanded flags, compiled once per change (Hub.Evaluation), and
// its change notices. Nothing here reads the database.
type hubFlags struct{ hub *stream.Hub }

var _ ofrep.Flags = hubFlags{}

// Environment returns the environment's compiled flags, tagged with the
// snapshot's ETag.
func (f hubFlags) Environment(ctx context.Context, envID uuid.UUID) (ofrep.Environment, error) {
	flags, tag, err := f.hub.Evaluation(ctx, envID)
	return ofrep.Environment{Flags: flags, Tag: tag}, err
}

// Watch registers a hub subscriber for the environment; its queued updates
// only say that something changed. The bootstrap it is handed is shared by
// every subscriber of the same version, so ignoring it costs nothing.
func (f hubFlags) Watch(ctx context.Context, envID uuid.UUID, creds []string) (ofrep.Watch, error) {
	sub, _, _, err := f.hub.Subscribe(ctx, []uuid.UUID{envID}, creds)
	if err != nil {
		return nil, err
	}
	return hubWatch{hub: f.hub, sub: sub}, nil
}

type hubWatch struct {
	hub *stream.Hub
	sub *stream.Subscriber
}

func (w hubWatch) Changed() <-chan struct{} { return w.sub.Wake() }
func (w hubWatch) Drain()                   { w.sub.Take() }
func (w hubWatch) Tag() string              { return w.sub.ETag() }
func (w hubWatch) Done() <-chan struct{}    { return w.sub.Done() }
func (w hubWatch) Close()                   { w.hub.Unsubscribe(w.sub) }
