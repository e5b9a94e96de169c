package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/rueidis"

	"github.com/switchyard/switchyard/server/app"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/config"
	"github.com/switchyard/switchyard/server/internal/apptest"
	"github.com/switchyard/switchyard/server/internal/testenv"
)

// An unset REDIS_CHANNEL keeps the channel every instance used before the
// variable existed, so an upgraded instance still hears the old ones.
func TestRedisChannelDefaultIsTheHistoricChannel(t *testing.T) {
	t.Parallel()
	cfg, err := config.FromEnv(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RedisChannel != bus.DefaultChannel || bus.DefaultChannel != "switchyard:changes" {
		t.Errorf("default REDIS_CHANNEL = %q, bus default = %q, want both switchyard:changes", cfg.RedisChannel, bus.DefaultChannel)
	}
}

// Two deployments share one Redis (and, only so that a stream can show what
// an instance heard, one database): deployment X on REDIS_CHANNEL=x, Y on
// REDIS_CHANNEL=y. The change-log poll is an hour, so a stream on another
// instance sees a write only through the bus. A write in X reaches X's other
// instance and never Y's; a write in Y reaches Y's and never X's. A fifth
// instance with REDIS_CHANNEL=y but app.WithBusChannel(x) is in X: the test
// option wins over the variable.
func TestRedisChannelSeparatesDeployments(t *testing.T) {
	t.Parallel()
	redisURL := testenv.RedisURL(t)
	chX, chY := "switchyard-test:x:"+uuid.NewString(), "switchyard-test:y:"+uuid.NewString()
	timing := app.WithStreamTiming(time.Second, time.Hour)

	x1 := apptest.Start(t, map[string]string{"REDIS_URL": redisURL, "REDIS_CHANNEL": chX}, timing)
	shared := func(channel string) map[string]string {
		return map[string]string{"REDIS_URL": redisURL, "REDIS_CHANNEL": channel, "DATABASE_URL": x1.DBURL}
	}
	x2 := apptest.Start(t, shared(chX), timing)
	y1 := apptest.Start(t, shared(chY), timing)
	y2 := apptest.Start(t, shared(chY), timing)
	xByOption := apptest.Start(t, shared(chY), timing, app.WithBusChannel(chX))

	// The bus subscribes in the background; wait until Redis counts every
	// instance on the channel it was given, so no write goes unheard.
	waitSubscribers(t, redisURL, map[string]int64{chX: 3, chY: 2})

	_, token := x1.User(t, "ada@example.com", "admin")
	_, envs := x1.DefaultProject(t)
	prod := envs["production"].String()
	key := x1.SDKKey(t, envs["production"])
	write := func(on *apptest.Server, flag string) {
		t.Helper()
		if status, raw, _ := on.Do(t, apptest.Request{Method: "POST", Path: "/api/environments/" + prod + "/flags", Bearer: token, Body: map[string]any{"key": flag, "is_enabled": true}}); status != 200 {
			t.Fatalf("create %s = %d %s", flag, status, raw)
		}
	}
	streams := map[string]*sseClient{}
	for name, s := range map[string]*apptest.Server{"x2": x2, "y1": y1, "x-by-option": xByOption} {
		c := openStream(t, s, "", map[string]string{"Authorization": "Bearer " + key})
		for _, want := range []string{"connected", "ready"} {
			if ev := c.next(t); ev.Name != want {
				t.Fatalf("%s: stream event %+v, want %s", name, ev, want)
			}
		}
		streams[name] = c
	}
	// nextFlag is the key of the flag in the stream's next update. Redis
	// delivers one connection's messages in publish order, and each write
	// below is seen by some stream before the next is made, so a stream that
	// had heard an earlier write of the other deployment would show it here
	// before the write it was meant to hear.
	nextFlag := func(name string) any {
		t.Helper()
		ev := streams[name].next(t)
		if ev.Name != "update" {
			t.Fatalf("%s: event %+v, want an update", name, ev)
		}
		return field(sseData(t, ev.Data), "flag", "key")
	}

	write(x1, "from-x")
	for _, name := range []string{"x2", "x-by-option"} {
		if got := nextFlag(name); got != "from-x" {
			t.Fatalf("%s (deployment X) received %v first, want from-x", name, got)
		}
	}
	write(y2, "from-y")
	if got := nextFlag("y1"); got != "from-y" {
		t.Fatalf("y1 (deployment Y) received %v first, want from-y: it heard deployment X", got)
	}
	write(x1, "from-x-again")
	for _, name := range []string{"x2", "x-by-option"} {
		if got := nextFlag(name); got != "from-x-again" {
			t.Fatalf("%s (deployment X) received %v, want from-x-again: it heard deployment Y", name, got)
		}
	}
}

// waitSubscribers polls PUBSUB NUMSUB until each channel has exactly the
// given number of subscribers.
func waitSubscribers(t *testing.T, redisURL string, want map[string]int64) {
	t.Helper()
	opt, err := rueidis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	client, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("connect to redis: %v", err)
	}
	defer client.Close()
	channels := make([]string, 0, len(want))
	for ch := range want {
		channels = append(channels, ch)
	}
	got := map[string]int64{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		reply, err := client.Do(ctx, client.B().PubsubNumsub().Channel(channels...).Build()).ToArray()
		cancel()
		if err != nil {
			t.Fatalf("PUBSUB NUMSUB: %v", err)
		}
		for i := 0; i+1 < len(reply); i += 2 {
			ch, _ := reply[i].ToString()
			got[ch], _ = reply[i+1].AsInt64()
		}
		done := true
		for ch, n := range want {
			done = done && got[ch] == n
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscribers per channel = %v, want %v", got, want)
		}
	}
}
