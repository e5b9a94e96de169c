package bus_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/bus/bustest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

func TestMemory(t *testing.T) {
	bustest.Run(t, func(t *testing.T) (bus.Bus, bus.Bus) {
		m := bus.NewMemory()
		t.Cleanup(func() { m.Close() })
		return m, m
	})
}

// newRedis opens a bus on url and a test-unique channel, ready to receive.
func newRedis(t *testing.T, url, channel string) *bus.Redis {
	t.Helper()
	r, err := bus.NewRedis(url, bus.RedisConfig{Channel: channel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	select {
	case <-r.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("redis bus did not subscribe")
	}
	return r
}

func TestRedis(t *testing.T) {
	url := testenv.RedisURL(t)
	bustest.Run(t, func(t *testing.T) (bus.Bus, bus.Bus) {
		channel := "switchyard-test:" + uuid.NewString()
		return newRedis(t, url, channel), newRedis(t, url, channel)
	})
}

// startRedis runs a private redis-server on a free port, so the test can
// stop and restart it.
func startRedis(t *testing.T, port int) func() {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	cmd := exec.Command(path, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %d did not start", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	return stop
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A Redis restart loses messages, so after resubscribing the bus tells its
// subscribers to resync; while Redis is down, publishing fails (the writer
// logs it; the change log covers the gap). Starting without Redis works.
func TestRedisRestartResyncs(t *testing.T) {
	testenv.RedisURL(t) // the same skip/fail rule as every Redis test
	port := freePort(t)
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)

	b, err := bus.NewRedis(url, bus.RedisConfig{Channel: "restart"}) // Redis is not up yet
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Publish(context.Background(), bus.Event{Op: bus.OpUpsert}); err == nil {
		t.Error("publish without redis succeeded")
	}
	resyncs := make(chan struct{}, 16)
	defer b.Subscribe(func(e bus.Event) {
		if e.Op == bus.OpResync {
			resyncs <- struct{}{}
		}
	})()

	stop := startRedis(t, port)
	waitResync := func(what string) {
		t.Helper()
		select {
		case <-resyncs:
		case <-time.After(20 * time.Second):
			t.Fatalf("no resync after %s", what)
		}
	}
	waitResync("redis came up")
	stop()
	if err := b.Publish(context.Background(), bus.Event{Op: bus.OpUpsert}); err == nil || !strings.Contains(err.Error(), "redis") {
		t.Errorf("publish while redis is down = %v, want an error", err)
	}
	startRedis(t, port)
	waitResync("redis restarted")
}
