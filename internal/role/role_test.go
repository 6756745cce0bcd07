package role

import (
	"reflect"
	"testing"
)

func TestOf(t *testing.T) {
	for name, want := range map[string]struct {
		role string
		n    int
	}{
		Producer: {Producer, 1}, Usage: {Usage, 1}, "consumer-usage-2": {Usage, 2}, "consumer-usage-3": {Usage, 3},
		Broker: {Broker, 1}, Controller: {Controller, 1}, "broker-1": {"broker", 1}, "broker-5": {"broker", 5},
	} {
		r, n, ok := Of(name)
		if !ok || r.Name != want.role || n != want.n {
			t.Errorf("Of(%q) = %q %d %v, want %q %d", name, r.Name, n, ok, want.role, want.n)
		}
	}
	for _, name := range []string{"", "consumer-usage-1", "consumer-usage-4", "consumer-usage-02", "broker-0", "broker-01", "broker-x", "broker-6", "producer-2"} {
		if r, _, ok := Of(name); ok {
			t.Errorf("Of(%q) = %q, want no role", name, r.Name)
		}
	}
}

func TestOrders(t *testing.T) {
	if got, want := Display(), []string{Producer, Current, Usage, Query, Broker, Store}; !reflect.DeepEqual(got, want) {
		t.Errorf("Display() = %v, want %v", got, want)
	}
	if got, want := StartOrder(), []string{Current, Usage, Query, Producer}; !reflect.DeepEqual(got, want) {
		t.Errorf("StartOrder() = %v, want %v", got, want)
	}
	if got, want := ClusterNames(2), []string{Controller, "broker-1", "broker-2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterNames(2) = %v, want %v", got, want)
	}
	for i, r := range All {
		for _, s := range All[i+1:] {
			if r.Key > 0 && r.Key == s.Key {
				t.Errorf("%s and %s share the key %d", r.Name, s.Name, r.Key)
			}
			if r.Start > 0 && r.Start == s.Start {
				t.Errorf("%s and %s share the start %d", r.Name, s.Name, r.Start)
			}
		}
	}
}

// The process table's strategy fits its 14 cells.
func TestShortLabelsFit(t *testing.T) {
	for _, r := range All {
		if s := r.Short.Say("earliest", r.Max); len([]rune(s)) > 14 {
			t.Errorf("%s: short strategy %q is over 14 cells", r.Name, s)
		}
	}
}
