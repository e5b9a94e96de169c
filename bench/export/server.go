package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildServer builds the repository's main package into dir: a binary of
// its own, so that this tool never replaces the bin/switchyard other
// sessions' tests may be running.
func buildServer(ctx context.Context, repo, dir string) (string, error) {
	root, err := filepath.Abs(repo)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "switchyard")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the server in %s: %w", root, err)
	}
	return bin, nil
}

// server is the switchyard process under test.
type server struct {
	cmd  *exec.Cmd
	addr string
	log  *os.File
	done chan struct{}
	err  error
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// startServer runs bin on a free loopback port against dbURL with the
// in-process bus, its output in logDir/name.log, dying with this process
// (Pdeathsig), and waits for /health.
func startServer(ctx context.Context, bin, dbURL string, maxConns int, logDir, name string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Dir = logDir
	cmd.Env = append(os.Environ(),
		"PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "DATABASE_URL="+dbURL, "REDIS_URL=",
		"COOKIE_SECURE=false", "RUST_LOG=warn", "ADMIN_EMAIL=", "ADMIN_PASSWORD=", "SDK_KEY=",
		"PUBLIC_DIR="+logDir, "DB_MAX_CONNECTIONS="+strconv.Itoa(maxConns),
	)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{cmd: cmd, addr: "127.0.0.1:" + strconv.Itoa(port), log: f, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("switchyard exited during start-up (%v); see %s", s.err, f.Name())
		case <-ctx.Done():
			s.stop(time.Second)
			return nil, ctx.Err()
		default:
		}
		resp, err := http.Get("http://" + s.addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop(time.Second)
	return nil, fmt.Errorf("switchyard not healthy after 90 s; see %s", f.Name())
}

// stop sends SIGTERM and waits up to grace, then kills.
func (s *server) stop(grace time.Duration) {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(grace):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	s.log.Close()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// memory reads a size field of /proc/<pid>/status (VmRSS, VmHWM) in bytes.
func memory(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10
	}
	return 0
}

// resetPeak makes VmHWM start again from the current resident size
// (proc(5), /proc/<pid>/clear_refs, value 5).
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// cpuTime is the user+system CPU time of pid, all its threads.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0
	}
	f := strings.Fields(string(b[i+2:]))
	// fields after ")": state(0) ... utime(11) stime(12), in USER_HZ (100)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}

// postgresCPU is the CPU time of the PostgreSQL backends connected to the
// scratch database (their process titles name it), summed.
func postgresCPU(dbName string) map[int]time.Duration {
	ents, _ := os.ReadDir("/proc")
	out := map[int]time.Duration{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(title), " "+dbName+" ") {
			continue
		}
		out[pid] = cpuTime(pid)
	}
	return out
}

// since is the CPU the backends used after before was taken: backends that
// exited meanwhile are not counted, new ones count whole.
func since(after, before map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}

// revision is the repository's commit, and whether the server's code
// differs from it in the working tree.
func revision(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown commit"
	}
	rev := strings.TrimSpace(string(out))
	diff, _ := exec.Command("git", "-C", repo, "status", "--porcelain", "--", "main.go", "server", "db", "queries", "migrations", "gen").Output()
	if len(strings.TrimSpace(string(diff))) > 0 {
		rev += " with uncommitted changes under server/, db/, queries/, migrations/ or gen/"
	}
	return rev
}

func loadAvg(b []byte) string {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// commandLine is how to rerun this measurement.
func commandLine() string {
	if s := os.Getenv("BENCH_EXPORT_COMMAND"); s != "" {
		return s
	}
	return "cd bench/export && go run . " + strings.Join(os.Args[1:], " ")
}
