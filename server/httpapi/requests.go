package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/switchyard/switchyard/server/audit"
)

// maxUserAgent bounds the user agent an audit entry keeps.
const maxUserAgent = 512

// requestRecorder puts what the audit trail records of a request (its ID,
// the client's address, its user agent) in the request's context, for the
// API and SCIM routes, which are the ones that write.
type requestRecorder struct {
	trusted []netip.Prefix // TRUSTED_PROXIES
}

func (rr requestRecorder) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua := r.UserAgent()
		if len(ua) > maxUserAgent {
			ua = ua[:maxUserAgent]
		}
		info := audit.Request{
			RequestID: audit.Str(w.Header().Get("X-Request-Id")),
			IP:        audit.Str(rr.clientIP(r)),
			UserAgent: audit.Str(strings.ToValidUTF8(ua, "\uFFFD")),
		}
		next.ServeHTTP(w, r.WithContext(audit.WithRequest(r.Context(), info)))
	})
}

// clientIP is the address the request came from, or, when that is a
// trusted proxy, the last address in X-Forwarded-For that is not one: the
// client as the first proxy it reached saw it. Addresses before that are
// whatever the client chose to send, so they are never taken.
func (rr requestRecorder) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap()
	if !rr.isTrusted(addr) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = hop.Unmap()
		if !rr.isTrusted(addr) {
			break
		}
	}
	return addr.String()
}

func (rr requestRecorder) isTrusted(a netip.Addr) bool {
	for _, p := range rr.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
