package board

import (
	"fmt"
	"regexp"
	"strings"
)

// brokersDown is librdkafka's count of unreachable connections, which
// includes the bootstrap one ("2/2 brokers are down" with one broker, or
// "0/1" as a connection drops): it says the broker is unreachable.
var brokersDown = regexp.MustCompile(`^\d+/\d+ brokers are down$`)

// plainError words a client error for the timeline; the raw text stays
// in the process's log (l).
func plainError(endpoint, msg string) string {
	low := strings.ToLower(msg)
	switch {
	case brokersDown.MatchString(msg):
		return "broker unreachable"
	case endpoint == "mongo" && (strings.Contains(low, "connection refused") || strings.Contains(low, "server selection")):
		return "store unreachable (connection refused)"
	case endpoint == "mongo" && (strings.Contains(low, "unexpectedly closed") || strings.Contains(low, "connection reset") || strings.Contains(low, "eof")):
		return "store unreachable (connection lost)"
	case strings.Contains(low, "connection refused"):
		return "broker unreachable (connection refused)"
	}
	return msg
}

// redeliveryText says what a consumer-usage start resumes with, in terms a
// presenter can check against the committed offsets; newGroup: a group
// without commits, which starts at the beginning of the topic.
func redeliveryText(n int64, newGroup bool) string {
	switch {
	case newGroup:
		return fmt.Sprintf("starts at the beginning of the topic (a new group with reset earliest has no committed offsets): %s delivered again",
			Plural(n, "message"))
	case n == 0:
		return "resumes exactly where processing stopped: committed offsets = processed, 0 messages delivered again"
	}
	return fmt.Sprintf("resumes at the committed offsets, behind what was processed: %s delivered again", Plural(n, "message"))
}

func redeliveryLevel(n int64) Level {
	if n == 0 {
		return LevelGood
	}
	return LevelWarn
}

func crashCause(e Exit) string {
	if e.Signal != "" {
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exited with code %d", e.Code)
}

func partitionList(ps []int32) string {
	if len(ps) == 0 {
		return "[]"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return "[" + strings.Join(s, " ") + "]"
}
