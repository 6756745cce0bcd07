package board

import (
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// ClusterBroker is broker n's process name in --cluster N ("broker-2").
func ClusterBroker(n int) string { return role.ClusterBroker(n) }

// ClusterBrokerNumber is n of ClusterBroker(n).
func ClusterBrokerNumber(name string) (int, bool) { return role.ClusterBrokerNumber(name) }

// IsKafkaNode: the process is a Kafka broker the board supervises (the
// embedded one, or a node of a cluster) or a cluster's controller.
func IsKafkaNode(name string) bool { return role.Lookup(name).Kafka }

// clusterBrokers are the supervised cluster brokers, in node order.
func (b *Board) clusterBrokers() []*proc {
	var out []*proc
	for _, n := range b.order {
		if _, ok := ClusterBrokerNumber(n); ok {
			out = append(out, b.procs[n])
		}
	}
	return out
}

// clusterListening notes a cluster broker's address and makes the
// bootstrap servers every known broker address, in node order.
func (b *Board) clusterListening(name, addr string) {
	if b.clusterAddrs == nil {
		b.clusterAddrs = map[string]string{}
	}
	b.clusterAddrs[name] = addr
	var addrs []string
	for _, p := range b.clusterBrokers() {
		if a := b.clusterAddrs[p.name]; a != "" {
			addrs = append(addrs, a)
		}
	}
	b.cfg.Brokers = strings.Join(addrs, ",")
}

// down: the process ran and is not up now.
func (p *proc) down() bool {
	return p.starts > 0 && (!p.alive() || p.state == Crashing || p.state == Stopping || p.state == Restarting)
}

// ClusterNames are every process name a cluster can have (the largest).
func ClusterNames() []string { return role.ClusterNames(role.MaxClusterBrokers) }

// brokerAwayText names what is away: "broker-2 down" (a cluster's
// brokers, the others carry on after a failover), else "broker
// unreachable".
func (b *Board) brokerAwayText() string {
	var down []string
	for _, p := range b.clusterBrokers() {
		if p.down() {
			down = append(down, p.name)
		}
	}
	if len(down) == 0 || b.brokerDown() {
		return "broker unreachable"
	}
	return strings.Join(down, " and ") + " down"
}
