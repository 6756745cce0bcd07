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
