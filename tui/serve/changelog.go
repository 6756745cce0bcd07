package serve

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChangeLog is the headless server's log of the table: the first table
// whole, then only what changed (the count line, the rows that changed
// and the labs dropped), so a quiet room writes nothing. A row's uptime,
// keep countdown and records counted (once there are some) move all the
// time: they are not changes of their own, but a row printed shows them
// as they are.
type ChangeLog struct {
	head string
	rows map[string]string
}

// Next is what to print for the table as of now ("" when nothing changed).
func (c *ChangeLog) Next(rows []LabRow, h TableHead) string {
	if c.rows == nil {
		c.rows = map[string]string{}
	}
	var b strings.Builder
	head := h.line(len(rows))
	if len(rows) == 0 {
		head += "no attendee connected yet\n"
	}
	if head != c.head {
		b.WriteString(head)
		c.head = head
	}
	var changed []LabRow
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.ID] = true
		key := r
		key.Uptime, key.Records = 0, min(key.Records, 1) // none yet, or some
		key.KeepLeft = key.KeepLeft.Truncate(time.Minute)
		k := fmt.Sprintf("%+v", key)
		if c.rows[r.ID] != k {
			c.rows[r.ID] = k
			changed = append(changed, r)
		}
	}
	var dropped []string
	for id := range c.rows {
		if !seen[id] {
			dropped = append(dropped, id)
			delete(c.rows, id)
		}
	}
	slices.Sort(dropped)
	if len(changed) > 0 {
		writeRows(&b, changed)
	}
	for _, id := range dropped {
		fmt.Fprintf(&b, "lab %s dropped\n", id)
	}
	return b.String()
}
