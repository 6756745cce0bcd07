package main

import (
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Every role's command line names a subcommand this binary has.
func TestRoleCommandsDispatch(t *testing.T) {
	for _, r := range role.All {
		if len(r.Command) == 0 || commands[r.Command[0]] == nil {
			t.Errorf("%s: command %q is no subcommand", r.Name, r.Command)
			continue
		}
		if r.Command[0] == "consumer" && (len(r.Command) != 2 || consumers[r.Command[1]] == nil) {
			t.Errorf("%s: command %q is no consumer", r.Name, r.Command)
		}
	}
}

func TestConsumerNames(t *testing.T) {
	if got, want := consumerNames(), "current, usage or query"; got != want {
		t.Errorf("consumerNames() = %q, want %q", got, want)
	}
}
