package scenario

import (
	"context"
	"fmt"
	"time"
)

func (h *fakeHost) AddPartitions(n int) error {
	return h.call(fmt.Sprintf("add-partitions %d", n), nil)
}
func (h *fakeHost) RecreateTopic(ctx context.Context) error { return h.call("recreate-topic", nil) }
func (h *fakeHost) Park(sensor string) error                { return h.call("park "+sensor, nil) }
func (h *fakeHost) SetRetention(_ context.Context, d time.Duration) error {
	return h.call("retention "+d.String(), nil)
}
func (h *fakeHost) PublishHistory(ctx context.Context, n int) error {
	return h.call(fmt.Sprintf("backlog %d", n), nil)
}
