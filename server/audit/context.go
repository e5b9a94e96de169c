package audit

import (
	"context"
	"strconv"

	"github.com/switchyard/switchyard/server/auth"
)

type actorKey struct{}

type requestKey struct{}

// WithActor returns ctx naming a as the actor of the changes recorded
// under it, whoever the request's principal is: the release guard, a
// scheduled change, SCIM, single sign-on, the system.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// WithRequest returns ctx carrying the request that the changes recorded
// under it come from.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request ctx carries, empty outside one.
func RequestFrom(ctx context.Context) Request {
	r, _ := ctx.Value(requestKey{}).(Request)
	return r
}

// ActorFrom returns the actor of a change made under ctx: the one WithActor
// named, else the request's principal, else the system.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	if p := auth.FromContext(ctx); p != nil {
		return PrincipalActor(p)
	}
	return Actor{Kind: ActorSystem}
}

// PrincipalActor names a request's principal: a user by session, a user by
// one of their personal access tokens, or an SDK key.
func PrincipalActor(p *auth.Principal) Actor {
	if p.Kind == auth.KindSDKKey {
		a := Actor{Kind: ActorSDKKey, Label: Str(p.KeyPrefix)}
		if p.KeyID != 0 {
			a.ID = Str(strconv.FormatInt(p.KeyID, 10))
		}
		return a
	}
	a := Actor{Kind: ActorUser, ID: Str(strconv.FormatInt(p.UserID, 10)), Email: Str(p.Email)}
	if p.TokenID != 0 {
		a.Kind, a.Label = ActorToken, Str(p.TokenPrefix)
	}
	return a
}
