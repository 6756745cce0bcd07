// Package cluster plans and runs a real Apache Kafka cluster (KRaft) for
// the dashboard's --cluster N: one controller-only node (process
// "controller", node id 100) and N broker-only nodes ("broker-1".."broker-N",
// node ids 1..N), all from the Maven-resolved jars of scripts/real-kafka.sh.
//
// The controller is separate so that killing brokers never costs the
// controller quorum: with two of three brokers down, the cluster still has a
// controller and answers acks=all writes with NOT_ENOUGH_REPLICAS.
//
// Layout under RUNDIR/cluster/: cluster.json (cluster id and ports, written
// on the first start and reused after), and per node NAME/ with
// server.properties, log4j2.properties and data/ (log.dirs, formatted once).
package cluster

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Names and ids of the nodes (the names are package role's).
const (
	Controller   = role.Controller
	ControllerID = 100
	// MaxBrokers bounds --cluster.
	MaxBrokers = role.MaxClusterBrokers
)

// BrokerNumber is n of broker-n, a broker's process name (n from 1).
func BrokerNumber(name string) (int, bool) { return role.ClusterBrokerNumber(name) }

// Names lists the processes of a cluster of n brokers: the controller first.
func Names(n int) []string { return role.ClusterNames(n) }

// Plan is what stays the same across starts of one run directory.
type Plan struct {
	ClusterID      string `json:"cluster_id"`
	Brokers        int    `json:"brokers"`
	ControllerPort int    `json:"controller_port"`
	// BrokerPorts[i] is broker i+1's client (PLAINTEXT) port.
	BrokerPorts []int `json:"broker_ports"`
}

// Node is one node of the plan.
type Node struct {
	Name string
	ID   int
	// Controller: a controller-only node; else a broker-only node.
	Controller bool
	Port       int
}

// Addr is the node's listener address.
func (n Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

// Node returns the named node of the plan.
func (p Plan) Node(name string) (Node, error) {
	if name == Controller {
		return Node{Name: name, ID: ControllerID, Controller: true, Port: p.ControllerPort}, nil
	}
	if n, ok := BrokerNumber(name); ok && n <= len(p.BrokerPorts) {
		return Node{Name: name, ID: n, Port: p.BrokerPorts[n-1]}, nil
	}
	return Node{}, fmt.Errorf("cluster: no node %q in a cluster of %d brokers", name, p.Brokers)
}

// Bootstrap is every broker's address, comma-separated.
func (p Plan) Bootstrap() string {
	addrs := make([]string, len(p.BrokerPorts))
	for i, port := range p.BrokerPorts {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	return strings.Join(addrs, ",")
}

// MinInsync is min.insync.replicas: 2, or 1 for a single broker.
func (p Plan) MinInsync() int { return min(2, p.Brokers) }

// Dir is RUNDIR/cluster.
func Dir(runDir string) string { return filepath.Join(runDir, "cluster") }

const planFile = "cluster.json"

// Load reads the plan of dir (RUNDIR/cluster), or makes one for n brokers
// with free ports and a new cluster id and writes it. reused says the plan
// was already there (the nodes' data is then reused too). A plan for
// another number of brokers is an error: its topics have another
// replication factor.
func Load(dir string, n int) (p Plan, reused bool, err error) {
	if n < 1 || n > MaxBrokers {
		return Plan{}, false, fmt.Errorf("cluster: %d brokers (want 1 to %d)", n, MaxBrokers)
	}
	path := filepath.Join(dir, planFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &p); err != nil {
			return Plan{}, false, fmt.Errorf("cluster: %s: %w", path, err)
		}
		if err := p.validate(); err != nil {
			return Plan{}, false, fmt.Errorf("cluster: %s: %w", path, err)
		}
		if p.Brokers != n {
			return Plan{}, false, fmt.Errorf("cluster: %s holds a cluster of %d brokers, not %d: use --cluster %d or another --data-dir", dir, p.Brokers, n, p.Brokers)
		}
		return p, true, nil
	case !errors.Is(err, os.ErrNotExist):
		return Plan{}, false, fmt.Errorf("cluster: %w", err)
	}
	ports, err := freePorts(n + 1)
	if err != nil {
		return Plan{}, false, err
	}
	p = Plan{ClusterID: NewClusterID(), Brokers: n, ControllerPort: ports[0], BrokerPorts: ports[1:]}
	if err := p.Save(dir); err != nil {
		return Plan{}, false, err
	}
	return p, false, nil
}

// ReadPlan reads dir's plan as it is (the nodes' own start).
func ReadPlan(dir string) (Plan, error) {
	var p Plan
	b, err := os.ReadFile(filepath.Join(dir, planFile))
	if err != nil {
		return p, fmt.Errorf("cluster: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("cluster: %s: %w", filepath.Join(dir, planFile), err)
	}
	return p, p.validate()
}

// Save writes the plan into dir (atomically).
func (p Plan) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, planFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, planFile))
}

func (p Plan) validate() error {
	if len(p.ClusterID) != 22 {
		return fmt.Errorf("bad cluster id %q", p.ClusterID)
	}
	if p.Brokers < 1 || p.Brokers > MaxBrokers || len(p.BrokerPorts) != p.Brokers {
		return fmt.Errorf("bad broker count %d with %d ports", p.Brokers, len(p.BrokerPorts))
	}
	seen := map[int]bool{}
	for _, port := range append([]int{p.ControllerPort}, p.BrokerPorts...) {
		if port < 1 || port > 65535 || seen[port] {
			return fmt.Errorf("bad or repeated port %d", port)
		}
		seen[port] = true
	}
	return nil
}

// NewClusterID is a Kafka Uuid: 16 random bytes, base64url without padding,
// never starting with '-' (it would look like an option).
func NewClusterID() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if id[0] != '-' && !strings.HasPrefix(id, "AAAAAAAAAAAAAAAAAAAAA") {
			return id
		}
	}
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1, all
// held until every one is picked.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cluster: pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
