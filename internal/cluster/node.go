package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

// NodeConfig configures RunNode.
type NodeConfig struct {
	// Dir is RUNDIR/cluster (holds cluster.json).
	Dir  string
	Name string
	// ClasspathFile holds the Kafka classpath (scripts/real-kafka.sh classpath).
	ClasspathFile string
	// Java is the java binary ("" = $JAVA_HOME/bin/java, else java on PATH).
	Java string
	// Output receives the JVM's output, line by line.
	Output io.Writer
}

// readyLine is what a KRaft node logs once it serves (broker and
// controller alike: KafkaRaftServer.startup).
const readyLine = "Kafka Server started"

// RunNode runs one node of the cluster: it writes the node's configuration,
// formats its storage on the first start, then runs the JVM as its own
// child in this process's process group (so a signal to the group reaches
// the JVM too), forwards the JVM's output, and emits Listening once the node
// logged that it started and its port accepts connections. It returns when
// the JVM exits: nil when that followed ctx's end (a stop: the JVM got the
// SIGTERM too and shut down in order), an error otherwise.
func RunNode(ctx context.Context, cfg NodeConfig, em *status.Emitter, log *slog.Logger) error {
	p, err := ReadPlan(cfg.Dir)
	if err != nil {
		return err
	}
	n, err := p.Node(cfg.Name)
	if err != nil {
		return err
	}
	cpb, err := os.ReadFile(cfg.ClasspathFile)
	if err != nil {
		return fmt.Errorf("cluster: the Kafka classpath: %w", err)
	}
	cp := strings.TrimSpace(string(cpb))
	java := cfg.Java
	if java == "" {
		if java, err = JavaBin(); err != nil {
			return err
		}
	}
	nd, err := p.WriteConfig(cfg.Dir, n)
	if err != nil {
		return err
	}
	out := cfg.Output
	if out == nil {
		out = os.Stderr
	}
	heap := BrokerHeap
	if n.Controller {
		heap = ControllerHeap
	}
	jvm := []string{heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(nd, "log4j2.properties"), "-cp", cp}
	props := filepath.Join(nd, "server.properties")

	if !Formatted(nd) {
		log.Info("formatting storage", "dir", filepath.Join(nd, "data"), "cluster_id", p.ClusterID)
		began := time.Now()
		cmd := exec.CommandContext(ctx, java, append(jvm, "kafka.tools.StorageTool", "format", "-t", p.ClusterID, "-c", props)...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cluster: formatting %s: %w (see its output above)", nd, err)
		}
		log.Info("formatted", "seconds", fmt.Sprintf("%.1f", time.Since(began).Seconds()))
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(java, append(jvm, "kafka.Kafka", props)...)
	cmd.Stdout, cmd.Stderr = pw, pw
	// Same process group as this wrapper (no Setpgid): the supervisor's
	// SIGTERM, SIGKILL, SIGSTOP and SIGCONT to the group reach the JVM. The
	// parent-death signal covers a wrapper killed on its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	if err := startLocked(cmd); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("cluster: start the JVM: %w", err)
	}
	pw.Close()
	log.Info("JVM started", "pid", cmd.Process.Pid, "node_id", n.ID, "addr", n.Addr())

	started := make(chan struct{})
	var once sync.Once
	var copied sync.WaitGroup
	copied.Go(func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(out, line)
			if strings.Contains(line, readyLine) {
				once.Do(func() { close(started) })
			}
		}
		_, _ = io.Copy(out, pr)
	})
	exited := make(chan error, 1)
	go func() { err := cmd.Wait(); copied.Wait(); exited <- err }()

	endpoint := "kafka"
	if n.Controller {
		endpoint = "controller"
	}
	stopping := false
	for {
		select {
		case <-started:
			started = nil
			go func() {
				// The log line comes just as the listeners open; wait
				// for the port too.
				for range 100 {
					if c, err := net.DialTimeout("tcp", n.Addr(), time.Second); err == nil {
						c.Close()
						log.Info("node ready", "seconds", fmt.Sprintf("%.1f", time.Since(began).Seconds()))
						em.Emit(status.Event{Type: status.Listening, Endpoint: endpoint, Addr: n.Addr()})
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
		case <-ctx.Done():
			if !stopping {
				stopping = true
				// The group's SIGTERM reached the JVM already; this covers
				// a signal to the wrapper alone.
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			ctx = context.Background()
		case err := <-exited:
			code := cmd.ProcessState.ExitCode()
			if stopping {
				log.Info("JVM stopped", "code", code)
				// 143 is the JVM's own exit after a SIGTERM: a clean stop.
				if code == 0 || code == 143 {
					return nil
				}
				return fmt.Errorf("the JVM exited with code %d while stopping", code)
			}
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				return fmt.Errorf("cluster: the JVM: %w", err)
			}
			return fmt.Errorf("the JVM exited on its own (%s); see the lines above", cmd.ProcessState.String())
		}
	}
}

// startLocked starts cmd from a goroutine locked to its OS thread for the
// rest of the process's life: a parent-death signal fires when the THREAD
// that forked the child exits, and the Go runtime may retire an ordinary
// goroutine's thread (see internal/supervisor's spawner).
func startLocked(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread outlives the JVM
		errc <- cmd.Start()
		select {}
	}()
	return <-errc
}

// JavaBin is $JAVA_HOME/bin/java, else java on PATH.
func JavaBin() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if j := filepath.Join(h, "bin", "java"); isExec(j) {
			return j, nil
		}
	}
	j, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("cluster: java not found: --cluster needs Java 17+ (e.g. apt-get install -y openjdk-17-jdk-headless) or JAVA_HOME")
	}
	return j, nil
}

func isExec(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
