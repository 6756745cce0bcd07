package lab

import (
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/action"
)

// TestEveryCallHasAHandler: the lab carries out every action of the
// registry that is not the view's own or a wait, and has no handler for
// an action the registry does not know.
func TestEveryCallHasAHandler(t *testing.T) {
	for _, a := range action.All() {
		if _, ok := handlers[a.Name]; ok != a.ByLab() {
			t.Errorf("%s: by the lab %v, handler %v", a.Name, a.ByLab(), ok)
		}
	}
	for n, h := range handlers {
		if _, ok := action.Lookup(n); !ok || h == nil {
			t.Errorf("handler for %q: not an action of the registry", n)
		}
	}
}
