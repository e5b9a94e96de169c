package app_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
)

// snapshotGet fetches /flags/snapshot with a client that leaves the
// encoding alone, so the test sees the bytes on the wire.
func snapshotGet(t *testing.T, url, key string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url+"/flags/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// GET /flags/snapshot honours Accept-Encoding: gzip (docs/reference/stream.md,
// Snapshot): the same JSON, compressed, with Content-Encoding, its own
// Content-Length, Vary, and the weak form of the identity body's ETag
// (docs/api.md); 304s work across both forms.
func TestSnapshotGzip(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	key := fe.s.SDKKey(t, uuid.MustParse(fe.envs["production"]))
	for i := range 20 {
		fe.call(t, "POST", fe.flags("production"), map[string]any{"key": fmt.Sprintf("flag-%02d", i), "is_enabled": true, "description": "a flag the snapshot carries"})
	}
	plainResp, plain := snapshotGet(t, fe.s.URL, key, nil)
	etag := plainResp.Header.Get("ETag")
	if plainResp.StatusCode != 200 || plainResp.Header.Get("Content-Encoding") != "" || plainResp.Header.Get("Vary") != "Accept-Encoding" ||
		len(etag) < 3 || etag[0] != '"' || plainResp.Header.Get("Content-Length") != strconv.Itoa(len(plain)) {
		t.Fatalf("identity snapshot = %d %v", plainResp.StatusCode, plainResp.Header)
	}

	for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8, *;q=0.1", "*"} {
		resp, raw := snapshotGet(t, fe.s.URL, key, map[string]string{"Accept-Encoding": ae})
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" ||
			h.Get("ETag") != "W/"+etag || h.Get("Content-Length") != strconv.Itoa(len(raw)) || h.Get("Content-Type") != "application/json" {
			t.Fatalf("Accept-Encoding %q: %d %v", ae, resp.StatusCode, h)
		}
		if got := gunzip(t, raw); !bytes.Equal(got, plain) {
			t.Fatalf("Accept-Encoding %q: decompressed body differs from the identity body", ae)
		}
		if len(raw) >= len(plain)/2 {
			t.Errorf("gzip body %d bytes for a %d-byte snapshot", len(raw), len(plain))
		}
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br", "*;q=0", "gzip;q=0, *"} {
		resp, raw := snapshotGet(t, fe.s.URL, key, map[string]string{"Accept-Encoding": ae})
		if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("ETag") != etag || !bytes.Equal(raw, plain) {
			t.Errorf("Accept-Encoding %q: %v, want the identity body", ae, resp.Header)
		}
	}

	// Revalidation: either tag matches either representation, and the 304
	// names the representation that would have been sent.
	for _, c := range []struct{ ae, inm, wantTag string }{
		{"gzip", "W/" + etag, "W/" + etag},
		{"gzip", etag, "W/" + etag},
		{"", "W/" + etag, etag},
		{"", etag, etag},
	} {
		hdr := map[string]string{"If-None-Match": c.inm}
		if c.ae != "" {
			hdr["Accept-Encoding"] = c.ae
		}
		resp, raw := snapshotGet(t, fe.s.URL, key, hdr)
		if resp.StatusCode != 304 || len(raw) != 0 || resp.Header.Get("ETag") != c.wantTag || resp.Header.Get("Vary") != "Accept-Encoding" ||
			resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("If-None-Match %s, Accept-Encoding %q: %d %v", c.inm, c.ae, resp.StatusCode, resp.Header)
		}
	}

	// Go's default client asks for gzip itself and decompresses.
	req, _ := http.NewRequestWithContext(t.Context(), "GET", fe.s.URL+"/flags/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !resp.Uncompressed || !bytes.Equal(body, plain) {
		t.Errorf("default client: uncompressed by the transport %v, same body %v", resp.Uncompressed, bytes.Equal(body, plain))
	}

	// A change gives a new body and tag in both forms.
	fe.call(t, "PATCH", fe.flags("production")+"/flag-00", map[string]any{"is_enabled": false})
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, raw := snapshotGet(t, fe.s.URL, key, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": "W/" + etag})
		if resp.StatusCode == 200 {
			if resp.Header.Get("ETag") == "W/"+etag || bytes.Equal(gunzip(t, raw), plain) {
				t.Fatalf("after a change: tag %s, same body %v", resp.Header.Get("ETag"), bytes.Equal(gunzip(t, raw), plain))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a change the gzip snapshot still answers %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
