// Command testop runs the test OpenID Provider as a process, for the
// dashboard's browser tests: it prints the issuer URL on its first line of
// output and serves until it is signalled.
//
//	testop -addr 127.0.0.1:0 -client switchyard:secret -redirect http://localhost:8080/api/auth/oidc/callback \
//	       -user 'ada|ada@example.com|Ada Lovelace|eng,leads'
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchyard/switchyard/server/internal/testop"
)

type users []testop.User

func (u *users) String() string { return fmt.Sprint(len(*u)) }

// Set parses subject|email|name|group,group (the email counts as verified).
func (u *users) Set(v string) error {
	f := strings.Split(v, "|")
	if len(f) != 4 || f[0] == "" || f[1] == "" {
		return fmt.Errorf("want subject|email|name|groups, got %q", v)
	}
	var groups []string
	if f[3] != "" {
		groups = strings.Split(f[3], ",")
	}
	*u = append(*u, testop.User{Subject: f[0], Email: f[1], EmailVerified: true, Name: f[2], Groups: groups})
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	client := flag.String("client", "switchyard:secret", "the relying party, id:secret")
	redirect := flag.String("redirect", "", "the relying party's redirect URI")
	verbose := flag.Bool("v", false, "log every request to standard error")
	slash := flag.Bool("trailing-slash", false, "name the issuer with a trailing slash, as Auth0 does")
	var us users
	flag.Var(&us, "user", "a user, subject|email|name|group,group (repeatable)")
	flag.Parse()
	id, secret, ok := strings.Cut(*client, ":")
	if !ok || *redirect == "" {
		fmt.Fprintln(os.Stderr, "testop: -client id:secret and -redirect are required")
		os.Exit(2)
	}
	if !*verbose {
		// The provider logs each request through the default logger.
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := testop.Start(*addr, testop.Config{
		Clients:       []testop.Client{{ID: id, Secret: secret, RedirectURIs: []string{*redirect}}},
		TrailingSlash: *slash,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testop:", err)
		os.Exit(1)
	}
	for _, u := range us {
		p.AddUser(u)
	}
	fmt.Println(p.URL)
	<-ctx.Done()
	_ = p.Close()
}
