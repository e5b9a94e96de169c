package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bucketChildEnv makes the test binary print buckets instead of testing, when it is re-run
// by TestBucketingAcrossProcesses.
const bucketChildEnv = "SWITCHYARD_EVAL_BUCKET_CHILD"

// bucketLines returns "flag user rollout-bucket variant-hash" for a fixed set of keys,
// non-ASCII and long keys included.
func bucketLines() []string {
	flags := []string{"checkout", "new-ui", "a", strings.Repeat("k", 100)}
	users := []string{"", "user-1", "alice@example.com", "ünïcødé", "😀", strings.Repeat("u", 300)}
	for i := range 50 {
		users = append(users, "user-"+strconv.Itoa(i*7919))
	}
	var lines []string
	for _, fk := range flags {
		c := compile(Flag{Key: fk})
		for _, u := range users {
			lines = append(lines, fmt.Sprintf("%s %q %d %d", fk, u, c.hash(u, "")%100, c.hash(u, variantSalt)))
		}
	}
	return lines
}

// TestBucketingAcrossProcesses checks docs/reference/evaluation.md, Buckets: the same user and
// flag get the same bucket across restarts and instances. It re-runs this test binary as a
// separate process, with a different GOMAXPROCS and GOGC, and compares the buckets it
// prints with those computed here.
func TestBucketingAcrossProcesses(t *testing.T) {
	if os.Getenv(bucketChildEnv) == "1" {
		w := bufio.NewWriter(os.Stdout)
		for _, l := range bucketLines() {
			fmt.Fprintln(w, l)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBucketingAcrossProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), bucketChildEnv+"=1", "GOMAXPROCS=1", "GOGC=10")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, stderr.String())
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		// The child's test framework adds PASS and ok lines; buckets have four fields.
		if strings.Count(l, " ") >= 3 {
			got = append(got, l)
		}
	}
	want := bucketLines()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buckets differ between processes (-this +child):\n%s", diff)
	}
}
