package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// proc is a server subprocess.
type proc struct {
	name string
	cmd  *exec.Cmd
	addr string
	log  *os.File
	done chan struct{}
	err  error
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// startProc starts cmd with the given environment, its output in logPath,
// dying with this process (Pdeathsig).
func startProc(name string, cmd *exec.Cmd, logPath string) (*proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if cmd.Stdout == nil {
		cmd.Stdout = f
	}
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: f, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop sends SIGTERM and waits up to grace, then kills.
func (p *proc) stop(grace time.Duration) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	p.log.Close()
}

// startBaseline re-executes this program in -serve-baseline mode and reads
// the address it prints.
func startBaseline(ctx context.Context, queue int, logDir string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-serve-baseline", "-baseline-queue", strconv.Itoa(queue))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe() // closed when we exit: the child exits too
	if err != nil {
		return nil, err
	}
	_ = stdin
	p, err := startProc("baseline", cmd, filepath.Join(logDir, "baseline.log"))
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		p.stop(time.Second)
		return nil, fmt.Errorf("baseline address: %w", err)
	}
	p.addr = strings.TrimSpace(line)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return p, waitHealthy(ctx, p, 10*time.Second)
}

// startSwitchyard runs bin/switchyard on a free loopback port.
func startSwitchyard(ctx context.Context, bin, name, dbURL, redisURL, logDir string, extraEnv []string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(filepath.Dir(bin)) // the repository root (PUBLIC_DIR)
	cmd.Env = append(os.Environ(),
		"PORT="+strconv.Itoa(port), "HOST=127.0.0.1", "DATABASE_URL="+dbURL, "REDIS_URL="+redisURL,
		"COOKIE_SECURE=false", "RUST_LOG=warn", "ADMIN_EMAIL=", "ADMIN_PASSWORD=",
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	p, err := startProc(name, cmd, filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	p.addr = "127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealthy(ctx, p, 90*time.Second); err != nil {
		p.stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitHealthy(ctx context.Context, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up (%v); see %s", p.name, p.err, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get("http://" + p.addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy after %s; see %s", p.name, timeout, p.log.Name())
}

// rssBytes is VmRSS of pid.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

// cpuTime is the user+system CPU time of pid (threads included).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+2:])
	// fields after ")": state(0) ... utime(11) stime(12)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ = 100
}

// benchDB is the scratch database's name: postgresCPU counts only the
// backends connected to it, not other users of the shared server.
var benchDB string

// pgCPU is the CPU time of each PostgreSQL backend serving the scratch
// database (its process title names the database), by pid.
type pgCPU map[int]time.Duration

func postgresCPU() pgCPU {
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
		if err != nil || !strings.Contains(string(title), " "+benchDB+" ") {
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

// metrics fetches a Prometheus text page and returns the unlabelled samples
// and the labelled ones by their full name{labels}.
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// perfRecord samples pid's stacks with perf(1) until the returned function
// is called, then writes a text report beside the data. It is a no-op when
// dir is empty.
func perfRecord(dir, name string, pid int) func() {
	if dir == "" {
		return func() {}
	}
	data := filepath.Join(dir, name+".perf.data")
	cmd := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-p", strconv.Itoa(pid), "-o", data)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "perf: %v\n", err)
		return func() {}
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		out, err := os.Create(filepath.Join(dir, name+".perf.txt"))
		if err != nil {
			return
		}
		defer out.Close()
		rep := exec.Command("perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "1", "-g", "none", "--sort", "symbol")
		rep.Stdout, rep.Stderr = out, out
		_ = rep.Run()
		fmt.Fprintf(os.Stderr, "perf profile of %s: %s\n", name, out.Name())
	}
}
