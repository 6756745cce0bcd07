package scenario

import (
	"context"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/action/actiontest"
)

// Do serves the runner's calls with the fake's typed methods.
func (h *fakeHost) Do(ctx context.Context, c action.Call) action.Result {
	return actiontest.Do(ctx, h, c)
}
