package lab

import (
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Every flag a role's entry names is one the lab knows how to fill.
func TestRoleFlagsFilled(t *testing.T) {
	for _, r := range role.All {
		for _, f := range r.Flags {
			if roleFlags[f] == nil {
				t.Errorf("%s: the lab cannot fill %s", r.Name, f)
			}
		}
	}
}

// A role's environment reaches its process unless the lab's own sets it.
func TestRoleEnv(t *testing.T) {
	t.Setenv("GOGC", "")
	if got := roleEnv(role.Store); len(got) != 1 || got[0] != "GOGC=400" {
		t.Errorf("store: %q, want [GOGC=400]", got)
	}
	if got := roleEnv(role.Current); len(got) != 0 {
		t.Errorf("consumer-current: %q, want nothing", got)
	}
	t.Setenv("GOGC", "50")
	if got := roleEnv(role.Store); len(got) != 0 {
		t.Errorf("store with GOGC=50 set: %q, want nothing", got)
	}
}
