package app

// The server runs in images that hold nothing but itself and the dashboard
// (deploy/Containerfile builds FROM scratch): Go's time-zone database and
// Mozilla's root certificates are built in. The roots are a fallback: where
// the system has its own (any ordinary host), Go uses those instead.
import (
	_ "time/tzdata"

	_ "golang.org/x/crypto/x509roots/fallback"
)
