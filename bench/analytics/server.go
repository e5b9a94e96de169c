package main

import (
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
// (Pdeathsig), and waits for /health. env adds or overrides variables.
func startServer(ctx context.Context, bin, dbURL string, maxConns int, logDir, name string, env ...string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Dir = logDir // PUBLIC_DIR: the dashboard is not needed
	cmd.Env = append(os.Environ(),
		"PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "DATABASE_URL="+dbURL, "REDIS_URL=",
		"COOKIE_SECURE=false", "RUST_LOG=warn", "ADMIN_EMAIL=", "ADMIN_PASSWORD=", "SDK_KEY=",
		"PUBLIC_DIR="+logDir, "DB_MAX_CONNECTIONS="+strconv.Itoa(maxConns),
	)
	cmd.Env = append(cmd.Env, env...)
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

// cpuTime is the user+system CPU time of pid, all its threads.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	// fields after ")": state(0) ... utime(11) stime(12), in USER_HZ (100)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}

// selfCPU is this process's CPU time (the SDK and the load generator).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgCPU is the CPU time of each PostgreSQL backend connected to the
// scratch database (its process title names the database), by pid.
type pgCPU map[int]time.Duration

func postgresCPU(dbName string) pgCPU {
	ents, _ := os.ReadDir("/proc")
	out := pgCPU{}
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

// since is the CPU the backends used after p0 was taken: backends that
// exited meanwhile are not counted, new ones count whole.
func (p1 pgCPU) since(p0 pgCPU) time.Duration {
	var d time.Duration
	for pid, t := range p1 {
		d += t - p0[pid]
	}
	return d
}

// cpuMeter measures the server's, PostgreSQL's and this tool's CPU over a
// phase.
type cpuMeter struct {
	pid    int
	dbName string
	t0     time.Time
	srv0   time.Duration
	pg0    pgCPU
	self0  time.Duration
}

type cpuUse struct {
	wall, server, postgres, tool time.Duration
}

func startCPU(pid int, dbName string) *cpuMeter {
	return &cpuMeter{pid: pid, dbName: dbName, t0: time.Now(), srv0: cpuTime(pid), pg0: postgresCPU(dbName), self0: selfCPU()}
}

func (m *cpuMeter) stop() cpuUse {
	return cpuUse{
		wall: time.Since(m.t0), server: cpuTime(m.pid) - m.srv0,
		postgres: postgresCPU(m.dbName).since(m.pg0), tool: selfCPU() - m.self0,
	}
}
