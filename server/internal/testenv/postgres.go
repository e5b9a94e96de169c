package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pgCtlTimeout bounds every pg_ctl call (start waits for the server to accept
// connections, stop for it to exit).
const pgCtlTimeout = 60 * time.Second

// Postgres is a private PostgreSQL cluster owned by one test, which may stop
// and start it at will: unlike the shared server of TEST_DATABASE_URL, which
// other tests (and other people) use, stopping this one harms nobody. It
// listens on a free loopback port with trust authentication, keeps its unix
// socket in its own directory, and runs with fsync off.
type Postgres struct {
	URL  string // postgres://postgres@127.0.0.1:<port>/postgres?sslmode=disable
	Port int

	bin  string // directory of initdb, pg_ctl and postgres
	dir  string // owned by the server's OS user; holds data/, the socket and the log
	cred *syscall.Credential
}

// StartPostgres creates and starts a private cluster, stopped and removed when
// the test ends. It needs PostgreSQL's server binaries
// (/usr/lib/postgresql/<version>/bin, or initdb and pg_ctl on PATH); without
// them the test skips, except under CI=true, where it fails
// (docs/reference/code-style.md, §10 Testing; .ci/services.sh installs them).
// PostgreSQL refuses to run as root, so as root the cluster runs as the
// postgres OS user.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin, err := pgBinDir()
	if err != nil {
		pgSkipOrFail(t, "testenv: no PostgreSQL server binaries for a private cluster ("+err.Error()+"); "+
			"install the postgresql package (bash .ci/services.sh does)")
	}
	p := &Postgres{bin: bin}
	if os.Geteuid() == 0 {
		p.cred, err = pgOSUser("postgres")
		if err != nil {
			pgSkipOrFail(t, "testenv: running as root, and PostgreSQL refuses root, but there is no postgres OS user to run it as: "+err.Error())
		}
	}
	// Not t.TempDir: its parent is private to root, and the server runs as
	// another user.
	p.dir, err = os.MkdirTemp("", "switchyard-pg-")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(p.dir) })
	if p.cred != nil {
		if err := os.Chown(p.dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			t.Fatalf("testenv: %v", err)
		}
	}
	p.Port, err = pgFreePort()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)

	data := filepath.Join(p.dir, "data")
	if out, err := p.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-sync", "--no-instructions"); err != nil {
		t.Fatalf("testenv: initdb: %v\n%s", err, out)
	}
	// A throw-away cluster: surviving a power cut buys nothing, so no fsync.
	// synchronous_commit stays on: with it off, "pg_ctl stop -m immediate"
	// loses the last commits still in the server's WAL buffers, and a test
	// that stops the server would see rows it wrote vanish.
	conf := fmt.Sprintf("\n# testenv.StartPostgres\nport = %d\nlisten_addresses = '127.0.0.1'\n"+
		"unix_socket_directories = '%s'\nfsync = off\nfull_page_writes = off\n"+
		"shared_buffers = 16MB\nmax_connections = 50\n", p.Port, p.dir)
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("testenv: configure cluster: %v", err)
	}
	t.Cleanup(func() {
		// Whatever state the test left it in: immediate needs no clients to leave.
		_, _ = p.run("pg_ctl", "stop", "-D", data, "-m", "immediate", "-w", "-t", "30")
	})
	p.Start(t)
	return p
}

// Start starts the cluster and waits until it accepts connections.
func (p *Postgres) Start(t testing.TB) {
	t.Helper()
	out, err := p.run("pg_ctl", "start", "-D", filepath.Join(p.dir, "data"),
		"-l", filepath.Join(p.dir, "server.log"), "-w", "-t", strconv.Itoa(int(pgCtlTimeout/time.Second)))
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		t.Fatalf("testenv: pg_ctl start: %v\n%s\nserver log:\n%s", err, out, log)
	}
}

// Stop stops the cluster with pg_ctl's shutdown mode: "fast" (clients are
// disconnected, the server shuts down cleanly) or "immediate" (every process
// quits at once; the next start recovers, as after a crash).
func (p *Postgres) Stop(t testing.TB, mode string) {
	t.Helper()
	out, err := p.run("pg_ctl", "stop", "-D", filepath.Join(p.dir, "data"), "-m", mode, "-w",
		"-t", strconv.Itoa(int(pgCtlTimeout/time.Second)))
	if err != nil {
		t.Fatalf("testenv: pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
}

// run runs one of the server binaries as the cluster's OS user.
func (p *Postgres) run(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgCtlTimeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
		// The postgres user's own environment, not root's HOME.
		cmd.Env = append(os.Environ(), "HOME="+p.dir, "USER=postgres", "LOGNAME=postgres")
	}
	// pg_ctl start leaves the server running with our pipes as its stdout
	// and stderr unless -l redirects them, which it does; a buffer (not
	// CombinedOutput's pipe) keeps a stray inheritor from blocking Wait.
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// pgBinDir finds the directory of the server binaries: the newest
// /usr/lib/postgresql/<version>/bin (Debian and Ubuntu keep them off PATH),
// else the one holding pg_ctl on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersionOf(dirs[i]) > pgVersionOf(dirs[j]) })
	for _, d := range dirs {
		if pgBinariesIn(d) {
			return d, nil
		}
	}
	if path, err := exec.LookPath("pg_ctl"); err == nil && pgBinariesIn(filepath.Dir(path)) {
		return filepath.Dir(path), nil
	}
	return "", fmt.Errorf("no initdb, pg_ctl and postgres in /usr/lib/postgresql/*/bin or on PATH")
}

func pgVersionOf(binDir string) int {
	v, _ := strconv.Atoi(strings.SplitN(filepath.Base(filepath.Dir(binDir)), ".", 2)[0])
	return v
}

func pgBinariesIn(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// pgOSUser returns the credentials of an OS user.
func pgOSUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("uid of %s: %w", name, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("gid of %s: %w", name, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// pgFreePort returns a loopback TCP port that was free a moment ago. Another
// process may take it before the cluster binds it; pg_ctl start then fails
// loudly rather than the test passing by accident.
func pgFreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// pgSkipOrFail skips the test with msg, or fails it under CI=true, where a
// skipped integration test would pass unnoticed (docs/reference/code-style.md,
// §10 Testing).
func pgSkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
