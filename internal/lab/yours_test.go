package lab

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// The user's consumer-usage is their program with exactly the documented
// environment, its stdout plain log lines; every instance its own
// instance id; consumer-query serves its database's records; and the
// built-in consumer's own actions are refused, saying why.
func TestYourConsumerSpec(t *testing.T) {
	l, err := New(Config{RunDir: t.TempDir(), Brokers: "127.0.0.1:1", Mongo: "mongodb://u:p@127.0.0.1:2/lab7", Topic: "t",
		UsageGroup: "g1", UsageCmd: []string{"python3", "my consumer.py", "--x"}})
	if err != nil {
		t.Fatal(err)
	}
	spec := l.roleSpec(board.UsageInstance(2))
	if spec.Program != "python3" || !slices.Equal(spec.Args, []string{"my consumer.py", "--x"}) || !spec.PlainStdout {
		t.Fatalf("spec %+v", spec)
	}
	want := []string{"KAFKA_BROKER=127.0.0.1:1", "KAFKA_TOPIC=t", "KAFKA_GROUP=g1", "KAFKA_GROUP_INSTANCE_ID=consumer-usage-2",
		"MONGO_URI=mongodb://u:p@127.0.0.1:2/lab7_yours?authSource=lab7"}
	if !slices.Equal(spec.Env, want) {
		t.Fatalf("env %q\nwant %q", spec.Env, want)
	}
	q := l.roleSpec(board.Query)
	if !slices.Contains(q.Args, "--source") || q.Args[slices.Index(q.Args, "--source")+1] != "records" ||
		!slices.Contains(q.Env, "MONGO_URI=mongodb://u:p@127.0.0.1:2/lab7_yours?authSource=lab7") {
		t.Fatalf("consumer-query: %+v", q)
	}
	for _, c := range []action.Call{
		{Name: action.Mode, Process: board.Usage, Value: "guarded"},
		{Name: action.CrashAt, Process: board.Usage, Value: "after-delta"},
	} {
		r := l.Do(context.Background(), c)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "runs your command (--usage-cmd)") {
			t.Errorf("%s: %v", c.Name, r.Err)
		}
	}
}
