package identity

import (
	"context"
	"fmt"
	"time"

	"github.com/switchyard/switchyard/db"
)

// SignIn runs fn in one identity transaction (so the credentials it ends,
// such as a workspace role it changes, end everywhere at once) and starts a
// session for the user id fn returns, in the same transaction: single
// sign-on's sessions are password sign-in's (docs/sso.md).
func (s *Service) SignIn(ctx context.Context, fn func(q *db.Queries) (int64, error)) (string, time.Time, error) {
	now := s.now()
	sess, err := txV(ctx, s, func(q *db.Queries) (Session, error) {
		id, err := fn(q)
		if err != nil {
			return Session{}, err
		}
		return s.startSession(ctx, q, id, now)
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sso sign-in: %w", err)
	}
	return sess.Cookie, sess.Expires, nil
}
