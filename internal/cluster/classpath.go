package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ScriptPath is where scripts/real-kafka.sh is looked for: $KRL_KAFKA_SCRIPT,
// else scripts/real-kafka.sh in the working directory or one of its
// parents, else next to the executable or in one of its parents.
func ScriptPath() (string, error) {
	if s := os.Getenv("KRL_KAFKA_SCRIPT"); s != "" {
		if isExec(s) {
			return s, nil
		}
		return "", fmt.Errorf("cluster: KRL_KAFKA_SCRIPT=%s is not an executable file", s)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for {
			s := filepath.Join(dir, "scripts", "real-kafka.sh")
			if isExec(s) {
				return s, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("cluster: scripts/real-kafka.sh not found (run the dashboard from the repository, or set KRL_KAFKA_SCRIPT, or KRL_KAFKA_CLASSPATH to a classpath file)")
}

// Classpath returns the path of a file holding Apache Kafka's classpath:
// $KRL_KAFKA_CLASSPATH, else what `scripts/real-kafka.sh classpath` prints
// (it resolves the jars with Maven on its first run, then reuses them).
func Classpath(ctx context.Context) (string, error) {
	if f := os.Getenv("KRL_KAFKA_CLASSPATH"); f != "" {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			return "", fmt.Errorf("cluster: KRL_KAFKA_CLASSPATH=%s is not a classpath file", f)
		}
		return f, nil
	}
	script, err := ScriptPath()
	if err != nil {
		return "", err
	}
	out, err := runScript(ctx, 10*time.Minute, script, "classpath")
	if err != nil {
		return "", fmt.Errorf("cluster: --cluster needs Java 17+ and Maven to resolve Apache Kafka: %s classpath: %w", script, err)
	}
	return out, nil
}

// WarmUp runs `scripts/real-kafka.sh warmup BOOTSTRAP`: Kafka's own Java
// admin client asks for every group coordinator until each answers (see
// scripts/real-kafka/Warmup.java for why). It returns the script's summary.
func WarmUp(ctx context.Context, bootstrap string, timeout time.Duration) (string, error) {
	script, err := ScriptPath()
	if err != nil {
		return "", err
	}
	secs := fmt.Sprint(int(timeout.Seconds()))
	out, err := runScript(ctx, timeout+30*time.Second, script, "warmup", bootstrap, secs)
	if err != nil {
		// An older checkout's script has no warmup command (exit 2, usage).
		return "", fmt.Errorf("%s warmup: %w", script, err)
	}
	return out, nil
}

// runScript runs the script and returns the last line of its stdout; on
// failure the error carries the end of its stderr.
func runScript(ctx context.Context, bound time.Duration, script string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, lastLines(stderr.String(), 8))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
