package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/embedded/embeddedtest"
)

const (
	secretUser = "krluser"
	secretPW   = "s3cretPW"
)

// TestMongoPasswordHidden: a MongoDB URI with a password reaches the
// children in their environment (readable by its owner only), never on a
// command line every local user can read, and no line the run prints or
// writes holds the password: it is shown as user:***@.
func TestMongoPasswordHidden(t *testing.T) {
	if os.Getenv("MONGO_URI") != "" {
		t.Skip("the embedded store of the test's own is needed: MONGO_URI is set")
	}
	// The embedded FerretDB takes PLAIN credentials without checking them.
	plain := embeddedtest.StartStore(t, "krl_secret_"+RandomSuffix())
	uri := strings.Replace(plain, "mongodb://", "mongodb://"+secretUser+":"+secretPW+"@", 1) + "?authMechanism=PLAIN"
	d := newDashboard(t)
	d.startHeadless("", "--mongo", uri, "--interval", "100ms")
	for _, who := range []string{"consumer-usage", "consumer-query"} {
		d.awaitLog(who+" on the store", regexp.MustCompile(who+` connected to mongo`), 60*time.Second)
	}
	seen := map[string]bool{}
	for pid, cmd := range taggedProcs(d.tag) {
		if pid == d.child.PID() {
			continue // the dashboard's own flags are the user's
		}
		if strings.Contains(cmd, secretPW) {
			t.Errorf("pid %d shows the password on its command line: %s", pid, cmd)
		}
		for _, role := range []string{"consumer usage", "consumer query"} {
			if strings.Contains(cmd, role) {
				seen[role] = true
				if env := environ(t, pid); !strings.Contains(env, "\x00MONGO_URI="+uri+"\x00") {
					t.Errorf("%s (pid %d) has no MONGO_URI=%s in its environment", role, pid, uri)
				}
			}
		}
		t.Logf("pid %d: %s", pid, cmd)
	}
	if !seen["consumer usage"] || !seen["consumer query"] {
		t.Fatalf("consumer-usage and consumer-query not both found running: %v", seen)
	}
	d.child.Signal(syscall.SIGTERM)
	d.waitExit(30 * time.Second)
	checkNoSecret(t, "the dashboard's stderr", d.stderr())
	logs, _ := filepath.Glob(filepath.Join(d.runDir, "logs", "*.log"))
	for _, path := range logs {
		b, _ := os.ReadFile(path)
		checkNoSecret(t, path, string(b))
	}
	report, err := os.ReadFile(d.report)
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, "the report", string(report))
	if !strings.Contains(string(report), `"mongo": "mongodb://`+secretUser+`:***@`) {
		t.Errorf("the report does not name the store as %s:***@", secretUser)
	}
}

// TestMongoPasswordHiddenInErrors: a store that does not answer is named
// with its password hidden.
func TestMongoPasswordHiddenInErrors(t *testing.T) {
	t.Parallel()
	out := headlessFails(t, 60*time.Second, "--mongo", "mongodb://"+secretUser+":"+secretPW+"@127.0.0.1:1/krl", "--connect-timeout", badEnvTimeout)
	checkNoSecret(t, "the error", out)
	wantAll(t, out, "MongoDB at mongodb://"+secretUser+":***@127.0.0.1:1/krl did not answer")
}

func checkNoSecret(t *testing.T, what, text string) {
	t.Helper()
	if i := strings.Index(text, secretPW); i >= 0 {
		t.Errorf("%s holds the password: …%s…", what, text[max(0, i-80):min(len(text), i+40)])
	}
}

func environ(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatalf("environment of pid %d: %v", pid, err)
	}
	return "\x00" + string(b)
}
