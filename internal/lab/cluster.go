package lab

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/board"
	"github.com/kafka-recovery-lab/krl/internal/cluster"
	"github.com/kafka-recovery-lab/krl/internal/supervisor"
)

// clusterStartTimeout bounds a cluster's start: four JVMs on a small
// machine, the first time with a format each.
const clusterStartTimeout = 3 * time.Minute

// replication is the replication factor and topic configs of the topics
// the lab creates: with --cluster N, N replicas and min.insync.replicas 2.
func (l *Lab) replication() (int, map[string]string) {
	if l.cfg.Cluster == 0 {
		return 1, nil
	}
	return l.cfg.Cluster, map[string]string{"min.insync.replicas": strconv.Itoa(min(2, l.cfg.Cluster))}
}

// startCluster starts --cluster N's nodes (controller and brokers at once:
// the brokers wait for the controller by themselves), waits until every
// one listens, warms up the group coordinators, and says how long it took.
// The board learns the bootstrap servers from the brokers' Listening events.
func (l *Lab) startCluster(ctx context.Context) error {
	began := time.Now()
	dir := cluster.Dir(l.cfg.RunDir)
	plan, reused, err := cluster.Load(dir, l.cfg.Cluster)
	if err != nil {
		return err
	}
	cp, err := cluster.Classpath(ctx)
	if err != nil {
		return err
	}
	names := cluster.Names(plan.Brokers)
	chans := map[string]<-chan listenResult{}
	for _, name := range names {
		chans[name] = l.awaitListen(name)
		defer l.forgetListen(name)
	}
	for _, name := range names {
		// The controller is stopped last (Tier -1): the brokers' controlled
		// shutdown asks it to move their leaders first.
		tier := 0
		if name == cluster.Controller {
			tier = -1
		}
		args := []string{"kafka-node", "--dir", dir, "--name", name, "--classpath-file", cp}
		if l.cfg.OffsetsRetention > 0 {
			args = append(args, "--offsets-retention", l.cfg.OffsetsRetention.String())
		}
		spec := supervisor.Spec{Name: name, Tier: tier, Args: args}
		if err := l.sup.Define(spec); err != nil {
			return err
		}
		if err := l.sup.Start(name); err != nil {
			return fmt.Errorf("start %s: %w", name, err)
		}
	}
	deadline := time.After(clusterStartTimeout)
	for _, name := range names {
		select {
		case r := <-chans[name]:
			if r.exit != nil {
				return l.exitedBeforeListening(name, *r.exit)
			}
		case <-deadline:
			return fmt.Errorf("%s did not start listening within %s; see %s/logs/%s.log", name, clusterStartTimeout, l.cfg.RunDir, name)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	listening := time.Since(began)
	// Without it, librdkafka can crash on a group coordinator still loading
	// (scripts/real-kafka/Warmup.java).
	warm, err := cluster.WarmUp(ctx, plan.Bootstrap(), 90*time.Second)
	if err != nil {
		l.log.Warn("cluster warm-up failed", "err", err)
		l.emit(board.Action{At: time.Now(), Text: "cluster warm-up failed (continuing): " + err.Error()})
	} else {
		l.log.Info("cluster warm-up", "result", warm)
	}
	data := "new data"
	if reused {
		data = "data reused"
	}
	took := time.Since(began)
	l.log.Info("cluster ready", "brokers", plan.Brokers, "seconds", fmt.Sprintf("%.1f", took.Seconds()),
		"listening_seconds", fmt.Sprintf("%.1f", listening.Seconds()), "reused", reused, "bootstrap", plan.Bootstrap())
	l.emit(board.Action{At: time.Now(), Text: fmt.Sprintf("cluster of %d brokers ready in %.1f s (%s; all nodes listening after %.1f s)",
		plan.Brokers, took.Seconds(), data, listening.Seconds())})
	return nil
}
