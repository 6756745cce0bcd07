package lab

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// roleSpec is a lesson role's process: its command line, and its
// environment with the store's URI (MONGO_URI: passwords stay off command
// lines).
func (l *Lab) roleSpec(name string) supervisor.Spec {
	if l.yours() && board.IsUsage(name) {
		return l.yoursSpec(name)
	}
	_, mongo := l.Addresses()
	if l.yours() && name == board.Query {
		// consumer-query serves the totals of the user's consumer.
		if uri, err := yoursURI(mongo); err == nil {
			mongo = uri
		}
	}
	return supervisor.Spec{Name: name, Args: l.roleArgs(name), Tier: 1, Env: append(roleEnv(name), EnvMongo+"="+mongo)}
}

// roleEnv is the environment name's role asks for beside the lab's own,
// where the lab's does not already say.
func roleEnv(name string) []string {
	var env []string
	for _, kv := range role.Lookup(name).Env() {
		if k, _, _ := strings.Cut(kv, "="); os.Getenv(k) == "" {
			env = append(env, kv)
		}
	}
	return env
}

// roles are the processes of the lesson, in start order: consumers first,
// so none misses the producer's first messages.
var roles = role.StartOrder()

// roleArgs is name's command line as the settings say now: its
// role's subcommand, the connection flags, and the role's own flags.
func (l *Lab) roleArgs(name string) []string {
	r, _, ok := role.Of(name)
	if !ok || r.Start == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.mirror.Config()
	// The store's URI goes in the environment (roleSpec), where no other
	// user can read it: a command line is world-readable.
	args := append(slices.Clone(r.Command), "--brokers", c.Brokers, "--topic", l.cfg.Topic)
	for _, f := range r.Flags {
		if v, ok := roleFlags[f](l, name); ok {
			args = append(args, f, v)
		}
	}
	return args
}

// roleFlags give the value of each flag a role's entry names, for process
// name; ok false leaves the flag out. l.mu is held.
var roleFlags = map[string]func(l *Lab, name string) (value string, ok bool){
	"--sensors":     func(l *Lab, _ string) (string, bool) { return fmt.Sprint(l.cfg.Sensors), true },
	"--interval":    func(l *Lab, _ string) (string, bool) { return l.cfg.Interval.String(), true },
	"--seed":        func(l *Lab, _ string) (string, bool) { return fmt.Sprint(l.cfg.Seed), l.cfg.Seed != 0 },
	"--mode":        func(l *Lab, _ string) (string, bool) { return string(l.settings.mode), true },
	"--reset":       func(l *Lab, _ string) (string, bool) { return string(l.settings.reset), true },
	"--group":       func(l *Lab, name string) (string, bool) { g := l.usageGroupArgLocked(name); return g, g != "" },
	"--instance-id": func(_ *Lab, name string) (string, bool) { return name, name != board.Usage },
	"--rebuild":     func(l *Lab, _ string) (string, bool) { return string(l.settings.rebuild), true },
	"--snapshot":    func(l *Lab, _ string) (string, bool) { return l.snapshotPath(), true },
	"--acks":        func(l *Lab, _ string) (string, bool) { return string(l.settings.acks), true },
	"--acked-log":   func(l *Lab, _ string) (string, bool) { return AckedLogPath(l.cfg.RunDir), true },
	"--park":        func(l *Lab, _ string) (string, bool) { return l.parked, l.parked != "" },
	"--source":      func(l *Lab, _ string) (string, bool) { return "records", l.yours() },
	"--effect-delay": func(l *Lab, name string) (string, bool) {
		d := l.settings.delays[name]
		return d.String(), d > 0
	},
}

// usageGroup is consumer-usage's fixed group in this baseline ("" = the
// consumer's default).
func (l *Lab) usageGroup() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g := l.usageGroupLocked(); g != "" {
		return g
	}
	return kafkacfg.UsageGroupID
}

func (l *Lab) usageGroupLocked() string {
	g := l.cfg.UsageGroup
	if l.settings.baseline == 0 {
		return g
	}
	if g == "" {
		g = kafkacfg.UsageGroupID
	}
	return fmt.Sprintf("%s-baseline-%d", g, l.settings.baseline)
}
