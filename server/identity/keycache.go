package identity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
)

// keyCacheTTL bounds how long a cached SDK key is trusted without a
// revocation notice, in case every notice about it was lost.
const keyCacheTTL = time.Minute

// keyCache remembers authenticated SDK keys, so that the SDK hot paths
// (snapshot polling, stream connections) do not query PostgreSQL per
// request. It is invalidated through the bus, so that a revocation still
// applies to the very next request (docs/reference/identity.md, Roles):
// the revoking instance forgets the key before it answers, and the others
// before the revocation is acknowledged (caughtUp covers the rest: an
// instance that cannot vouch for its caches reads the change log first);
// a resync forgets everything.
type keyCache struct {
	// caughtUp, when set, returns once the cache holds every revocation
	// any instance has acknowledged (identity.Config.CaughtUp).
	caughtUp func(context.Context) error
	mu       sync.RWMutex
	byHash   map[string]cachedKey
	legacy   *cachedKey // the SDK_KEY principal
	hashes   map[int64]string
	cleared  time.Time
}

type cachedKey struct {
	p  auth.Principal
	at time.Time
}

func newKeyCache(caughtUp func(context.Context) error) *keyCache {
	return &keyCache{caughtUp: caughtUp, byHash: map[string]cachedKey{}, hashes: map[int64]string{}}
}

// current returns once the cache may be trusted (caughtUp).
func (c *keyCache) current(ctx context.Context) error {
	if c.caughtUp == nil {
		return nil
	}
	if err := c.caughtUp(ctx); err != nil {
		return fmt.Errorf("wait for acknowledged revocations: %w", err)
	}
	return nil
}

func (c *keyCache) get(hash []byte, now time.Time) (*auth.Principal, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.byHash[string(hash)]
	if !ok || now.Sub(e.at) >= keyCacheTTL || now.Before(e.at) {
		return nil, false
	}
	p := e.p
	return &p, true
}

// put caches p unless a revocation or resync happened after the lookup
// began (the lookup may have read the row just before it was deleted).
func (c *keyCache) put(hash []byte, p auth.Principal, lookedUp, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !lookedUp.After(c.cleared) {
		return
	}
	c.byHash[string(hash)] = cachedKey{p: p, at: now}
	c.hashes[p.KeyID] = string(hash)
}

// getByID is get for the key whose id is id (OFREP event streams name
// their key by id).
func (c *keyCache) getByID(id int64, now time.Time) (*auth.Principal, bool) {
	c.mu.RLock()
	h, ok := c.hashes[id]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return c.get([]byte(h), now)
}

func (c *keyCache) getLegacy(now time.Time) (*auth.Principal, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.legacy == nil || now.Sub(c.legacy.at) >= keyCacheTTL || now.Before(c.legacy.at) {
		return nil, false
	}
	p := c.legacy.p
	return &p, true
}

func (c *keyCache) putLegacy(p auth.Principal, lookedUp, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lookedUp.After(c.cleared) {
		c.legacy = &cachedKey{p: p, at: now}
	}
}

// forget drops one key.
func (c *keyCache) forget(id int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.hashes[id]; ok {
		delete(c.byHash, h)
		delete(c.hashes, id)
	}
	// A lookup still in flight may have read the key before its deletion.
	c.cleared = now
}

// clear drops everything.
func (c *keyCache) clear(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byHash, c.hashes, c.legacy, c.cleared = map[string]cachedKey{}, map[int64]string{}, nil, now
}

// Invalidate applies a change notification to the service's caches: an SDK
// key's revocation forgets the key, a resync (messages may have been lost)
// forgets every key. The hub calls it for every notification it handles,
// from the bus and from the change log.
func (s *Service) Invalidate(e bus.Event) {
	switch e.Op {
	case bus.OpRevoke:
		ref, _ := auth.RevokedRef(e.Key)
		if id, ok := auth.ParseSDKKeyRef(ref); ok {
			s.keys.forget(id, s.now())
		}
	case bus.OpResync:
		s.keys.clear(s.now())
	}
}
