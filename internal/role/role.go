// Package role is the one table of the processes the dashboard shows: for
// each its name, its recovery strategy in words, its jump key, how its lag
// is read, whether it serves GET /healthz, its command line and its place
// in the start order. The board, the lab, the UI and the report look a
// role's property up here instead of switching on its name. Pure data: no
// I/O.
package role

import (
	"strconv"
	"strings"
)

// Process names, as the supervisor and the script language use them.
const (
	Producer   = "producer"
	Current    = "consumer-current"
	Usage      = "consumer-usage"
	Query      = "consumer-query"
	Broker     = "broker"
	Store      = "store"
	Controller = "controller" // the KRaft controller of --cluster N
)

// Bounds on the roles that run several processes.
const (
	// MaxUsageInstances: the topic has 3 partitions, so a fourth member of
	// consumer-usage's group would own none.
	MaxUsageInstances = 3
	// MaxClusterBrokers bounds --cluster.
	MaxClusterBrokers = 5
	// clusterBrokerStem names a cluster's brokers: broker-1..broker-N.
	clusterBrokerStem = "broker"
)

// LagSource is how a role's lag is read.
type LagSource int

const (
	// LagNone: nothing to show (the broker, the store).
	LagNone LagSource = iota
	// LagNotKafka: the role reads no Kafka offsets ("no Kafka lag").
	LagNotKafka
	// LagCommitted: the high watermark minus its group's committed offsets.
	LagCommitted
	// LagPositions: the high watermark minus the positions it reports.
	LagPositions
	// LagSent: the messages it sent (the producer).
	LagSent
)

// ReadsMessages: the role consumes the topic (its lag is a number of
// messages behind).
func (s LagSource) ReadsMessages() bool { return s == LagCommitted || s == LagPositions }

// Label is a strategy in words: Text, then the consumer's offset reset
// when Reset, or the process's number when Number.
type Label struct {
	Text          string
	Reset, Number bool
}

// Say is the label for a process running with reset, numbered n.
func (l Label) Say(reset string, n int) string {
	s := l.Text
	if l.Reset {
		s += reset
	}
	if l.Number {
		s += strconv.Itoa(n)
	}
	return s
}

// Role is one kind of process.
type Role struct {
	// Name is the process name; of a Numbered role, the stem of its names.
	Name string
	// Max is how many processes may run the role: Name, then Name-2 up to
	// Name-Max (0 means one). A Numbered role's are Name-1 to Name-Max.
	Max      int
	Numbered bool
	// Key is the jump key and the place in the display order (1 first);
	// 0: no key.
	Key int
	// Strategy is the recovery strategy as the board says it; Short the
	// same in at most 14 cells, for the process table.
	Strategy, Short Label
	Lag             LagSource
	// Health: serves GET /healthz on its HTTP endpoint.
	Health bool
	// Kafka: a Kafka node (the embedded broker, a cluster's controller or
	// brokers); the display lists them where the broker is.
	Kafka bool
	// Serves is the endpoint whose address the dashboard's clients use
	// ("kafka", "mongo"), learnt from the role's Listening event.
	Serves string
	// UpOnListen: running once it listens (it has no other sign of life).
	UpOnListen bool
	// Command is its subcommand of this binary; Flags the flags the lab
	// fills beyond the connection flags (--brokers, --mongo, --topic) the
	// lesson's roles all take.
	Command []string
	Flags   []string
	// Start is its place in the lesson's start order (1 first): consumers
	// first, so none misses the producer's first messages. 0: not a
	// lesson role (the infrastructure starts before them).
	Start int
	// GOGC is the collector's target the lab starts its process with (0:
	// Go's default, 100), unless the environment sets one.
	GOGC int
}

// Env is what the role's process gets beside the lab's environment.
func (r Role) Env() []string {
	if r.GOGC == 0 {
		return nil
	}
	return []string{"GOGC=" + strconv.Itoa(r.GOGC)}
}

// All is every role, in display order.
var All = []Role{
	{Name: Producer, Key: 1, Start: 4,
		Strategy: Label{Text: "publishes telemetry"}, Short: Label{Text: "publishes"},
		Lag: LagSent, Command: []string{"producer"}, Flags: []string{"--sensors", "--interval", "--seed", "--acks", "--acked-log", "--park"}},
	{Name: Current, Key: 2, Start: 1,
		Strategy: Label{Text: "replay from earliest"}, Short: Label{Text: "full replay"},
		Lag: LagPositions, Health: true, Command: []string{"consumer", "current"},
		Flags: []string{"--rebuild", "--snapshot"}},
	{Name: Usage, Key: 3, Start: 2, Max: MaxUsageInstances,
		Strategy: Label{Text: "checkpoint + ", Reset: true}, Short: Label{Text: "ckpt+", Reset: true},
		Lag: LagCommitted, Health: true, Command: []string{"consumer", "usage"},
		Flags: []string{"--mode", "--reset", "--group", "--instance-id", "--effect-delay"}},
	{Name: Query, Key: 4, Start: 3,
		Strategy: Label{Text: "stateless"}, Short: Label{Text: "stateless"},
		Lag: LagNotKafka, UpOnListen: true, Command: []string{"consumer", "query"}, Flags: []string{"--source"}},
	{Name: Broker, Key: 5,
		Strategy: Label{Text: "embedded kfake"}, Short: Label{Text: "embedded kfake"},
		Kafka: true, Serves: "kafka", UpOnListen: true, Command: []string{"broker"}},
	{Name: Store, Key: 6,
		Strategy: Label{Text: "embedded FerretDB"}, Short: Label{Text: "emb. FerretDB"},
		Serves: "mongo", UpOnListen: true, Command: []string{"store"},
		// FerretDB allocates about 4 MB a second per lab around a live heap
		// of 1-3 MB: at Go's 4 MB floor it collected twice a second per lab
		// (7-9% of its CPU), at a 16 MB floor a quarter as often.
		GOGC: 400},
	{Name: Controller,
		Strategy: Label{Text: "KRaft controller"}, Short: Label{Text: "KRaft ctrl"},
		Kafka: true, UpOnListen: true, Command: []string{"kafka-node"}},
	{Name: clusterBrokerStem, Numbered: true, Max: MaxClusterBrokers,
		Strategy: Label{Text: "Apache Kafka node ", Number: true}, Short: Label{Text: "Kafka node ", Number: true},
		Kafka: true, Serves: "kafka", UpOnListen: true, Command: []string{"kafka-node"}},
}

// Of is the role of a process name and the process's number in it (1 for
// the first, unnumbered instance); ok is false for a name no role has.
func Of(name string) (r Role, n int, ok bool) {
	for _, r := range All {
		if n, ok := r.number(name); ok {
			return r, n, true
		}
	}
	return Role{}, 0, false
}

// Lookup is the role of a process name (the zero Role if none).
func Lookup(name string) Role {
	r, _, _ := Of(name)
	return r
}

// number is n of r.Instance(n) for name.
func (r Role) number(name string) (int, bool) {
	if name == r.Name && !r.Numbered {
		return 1, true
	}
	rest, ok := strings.CutPrefix(name, r.Name+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	first := 2
	if r.Numbered {
		first = 1
	}
	if err != nil || n < first || n > max(r.Max, 1) || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// Instance is the role's nth process name (from 1).
func (r Role) Instance(n int) string {
	if n <= 1 && !r.Numbered {
		return r.Name
	}
	return r.Name + "-" + strconv.Itoa(n)
}

// Display is the keyed roles' names in display order: index+1 is the
// dashboard's jump key.
func Display() []string {
	var names []string
	for _, r := range All {
		if r.Key > 0 {
			names = append(names, r.Name)
		}
	}
	return names
}

// StartOrder is the lesson's roles in the order the lab starts them.
func StartOrder() []string {
	var names []string
	for start := 1; start <= len(All); start++ {
		for _, r := range All {
			if r.Start == start {
				names = append(names, r.Name)
			}
		}
	}
	return names
}

// Lesson is the lesson's roles (the producer and the consumers) in display
// order.
func Lesson() []string {
	var names []string
	for _, r := range All {
		if r.Start > 0 {
			names = append(names, r.Name)
		}
	}
	return names
}

// UsageInstance names consumer-usage's nth instance (1: consumer-usage).
func UsageInstance(n int) string { return Lookup(Usage).Instance(n) }

// UsageInstanceNumber is n of UsageInstance(n), and whether name is a
// consumer-usage instance at all.
func UsageInstanceNumber(name string) (int, bool) { return Lookup(Usage).number(name) }

// ClusterBroker is broker n's process name in --cluster N ("broker-2").
func ClusterBroker(n int) string { return clusterBroker().Instance(n) }

// ClusterBrokerNumber is n of ClusterBroker(n).
func ClusterBrokerNumber(name string) (int, bool) { return clusterBroker().number(name) }

// ClusterNames lists the processes of a cluster of n brokers: the
// controller first.
func ClusterNames(n int) []string {
	names := []string{Controller}
	for i := 1; i <= n; i++ {
		names = append(names, ClusterBroker(i))
	}
	return names
}

func clusterBroker() Role {
	for _, r := range All {
		if r.Numbered && r.Name == clusterBrokerStem {
			return r
		}
	}
	panic("role: no cluster broker role")
}
