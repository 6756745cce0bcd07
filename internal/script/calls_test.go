package script

import (
	"context"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/action/actiontest"
)

// Do serves the script's calls with the fake's typed methods.
func (f *fakeTarget) Do(ctx context.Context, c action.Call) action.Result {
	return actiontest.Do(ctx, f, c)
}
