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
	// Settings go into the node's server.properties.
	Settings Settings
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
	r, err := prepareNode(cfg, em, log)
	if err != nil {
		return err
	}
	if err := r.formatOnce(ctx); err != nil {
		return err
	}
	began := time.Now()
	cmd, output, err := r.startJVM()
	if err != nil {
		return err
	}
	started, exited := r.forward(cmd, output)
	return r.wait(ctx, cmd, began, started, exited)
}

// nodeRun is one RunNode: the node and how its JVM is run.
type nodeRun struct {
	plan  Plan
	node  Node
	dir   string // the node's directory
	java  string
	jvm   []string // the JVM's options, classpath included
	props string   // server.properties
	out   io.Writer
	em    *status.Emitter
	log   *slog.Logger
}

// prepareNode reads the plan and the classpath and writes the node's
// configuration.
func prepareNode(cfg NodeConfig, em *status.Emitter, log *slog.Logger) (*nodeRun, error) {
	p, err := ReadPlan(cfg.Dir)
	if err != nil {
		return nil, err
	}
	n, err := p.Node(cfg.Name)
	if err != nil {
		return nil, err
	}
	cpb, err := os.ReadFile(cfg.ClasspathFile)
	if err != nil {
		return nil, fmt.Errorf("cluster: the Kafka classpath: %w", err)
	}
	java := cfg.Java
	if java == "" {
		if java, err = JavaBin(); err != nil {
			return nil, err
		}
	}
	nd, err := p.WriteConfig(cfg.Dir, n, cfg.Settings)
	if err != nil {
		return nil, err
	}
	r := &nodeRun{plan: p, node: n, dir: nd, java: java, out: cfg.Output, em: em, log: log,
		props: filepath.Join(nd, "server.properties")}
	if r.out == nil {
		r.out = os.Stderr
	}
	heap := BrokerHeap
	if n.Controller {
		heap = ControllerHeap
	}
	// C1 only (TieredStopAtLevel=1): four JVMs starting at once on a small
	// machine spend most of their start-up in the C2 compiler, and the
	// lab's traffic is far below what C1-compiled brokers serve.
	r.jvm = []string{heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(nd, "log4j2.properties"), "-cp", strings.TrimSpace(string(cpb))}
	return r, nil
}

// formatOnce formats the node's storage unless it is formatted already.
func (r *nodeRun) formatOnce(ctx context.Context) error {
	if Formatted(r.dir) {
		return nil
	}
	r.log.Info("formatting storage", "dir", filepath.Join(r.dir, "data"), "cluster_id", r.plan.ClusterID)
	began := time.Now()
	cmd := exec.CommandContext(ctx, r.java, append(r.jvm, "kafka.tools.StorageTool", "format", "-t", r.plan.ClusterID, "-c", r.props)...)
	cmd.Stdout, cmd.Stderr = r.out, r.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cluster: formatting %s: %w (see its output above)", r.dir, err)
	}
	r.log.Info("formatted", "seconds", fmt.Sprintf("%.1f", time.Since(began).Seconds()))
	return nil
}

// startJVM starts the node's JVM; output reads what it writes.
func (r *nodeRun) startJVM() (cmd *exec.Cmd, output *os.File, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.Command(r.java, append(r.jvm, "kafka.Kafka", r.props)...)
	cmd.Stdout, cmd.Stderr = pw, pw
	// Same process group as this wrapper (no Setpgid): the supervisor's
	// SIGTERM, SIGKILL, SIGSTOP and SIGCONT to the group reach the JVM. The
	// parent-death signal covers a wrapper killed on its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := startLocked(cmd); err != nil {
		pr.Close()
		pw.Close()
		return nil, nil, fmt.Errorf("cluster: start the JVM: %w", err)
	}
	pw.Close()
	r.log.Info("JVM started", "pid", cmd.Process.Pid, "node_id", r.node.ID, "addr", r.node.Addr())
	return cmd, pr, nil
}

// forward copies the JVM's output to r.out; started closes when the node
// logs readyLine, and exited gets cmd.Wait's error once the output is all
// copied.
func (r *nodeRun) forward(cmd *exec.Cmd, output io.Reader) (started <-chan struct{}, exited <-chan error) {
	ready := make(chan struct{})
	var once sync.Once
	var copied sync.WaitGroup
	copied.Go(func() {
		sc := bufio.NewScanner(output)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.out, line)
			if strings.Contains(line, readyLine) {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(r.out, output)
	})
	done := make(chan error, 1)
	go func() { err := cmd.Wait(); copied.Wait(); done <- err }()
	return ready, done
}

// wait runs until the JVM exits: it announces the node once it started,
// passes ctx's end on as a SIGTERM, and says how the JVM ended.
func (r *nodeRun) wait(ctx context.Context, cmd *exec.Cmd, began time.Time, started <-chan struct{}, exited <-chan error) error {
	stopping := false
	for {
		select {
		case <-started:
			started = nil
			go r.announceWhenListening(began)
		case <-ctx.Done():
			if !stopping {
				stopping = true
				// The group's SIGTERM reached the JVM already; this covers
				// a signal to the wrapper alone.
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			ctx = context.Background()
		case err := <-exited:
			return r.jvmExit(cmd, err, stopping)
		}
	}
}

// announceWhenListening emits Listening once the node's port accepts
// connections: the log line comes just as the listeners open.
func (r *nodeRun) announceWhenListening(began time.Time) {
	endpoint := "kafka"
	if r.node.Controller {
		endpoint = "controller"
	}
	for range 100 {
		if c, err := net.DialTimeout("tcp", r.node.Addr(), time.Second); err == nil {
			c.Close()
			r.log.Info("node ready", "seconds", fmt.Sprintf("%.1f", time.Since(began).Seconds()))
			r.em.Emit(status.Event{Type: status.Listening, Endpoint: endpoint, Addr: r.node.Addr()})
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jvmExit is RunNode's answer for a JVM that exited with err (cmd.Wait's):
// nil for a clean stop, an error otherwise.
func (r *nodeRun) jvmExit(cmd *exec.Cmd, err error, stopping bool) error {
	code := cmd.ProcessState.ExitCode()
	if stopping {
		r.log.Info("JVM stopped", "code", code)
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
