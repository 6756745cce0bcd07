package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckTopic(t *testing.T) {
	for _, ok := range []string{"sensor-data", "a", "A.b_c-1", strings.Repeat("x", 249), "..."} {
		if err := CheckTopic(ok); err != nil {
			t.Errorf("CheckTopic(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../../x y", "x y", "a/b", "é", "a\x1b", strings.Repeat("x", 250)} {
		err := CheckTopic(bad)
		if !errors.Is(err, ErrUsage) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckTopic(%q) = %v, want a one-line usage error", bad, err)
		}
	}
}
