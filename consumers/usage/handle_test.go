package usage

import (
	"context"
	"fmt"
)

// Handle applies one record: HandleBatch of one.
func (p *Processor) Handle(ctx context.Context, r Record) (Result, error) {
	res, err := p.HandleBatch(ctx, []Record{r})
	return res[0], err
}

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Replayed:
		return "replayed"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}
