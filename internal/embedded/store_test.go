package embedded

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/status"
)

func storeRole(dir, listen string) roleFunc {
	return func(ctx context.Context, em *status.Emitter, log *slog.Logger) error {
		return RunStore(ctx, StoreConfig{DataDir: dir, Listen: listen}, em, log)
	}
}

func startStore(t *testing.T, dir string) *running {
	t.Helper()
	r := startRole(t, "store", "mongo", storeRole(dir, "127.0.0.1:0"))
	checkLoopbackAddr(t, r.addr)
	return r
}

func connect(t *testing.T, addr string) *mongo.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(ctx, options.Client().ApplyURI("mongodb://"+addr+"/").
		SetServerSelectionTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

type reading struct {
	ID     string  `bson:"_id"`
	Sensor string  `bson:"sensor"`
	Value  float64 `bson:"value"`
}

func findAll(t *testing.T, coll *mongo.Collection) []reading {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out []reading
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStorePersistsAcrossRestart: documents written before a clean stop are
// found after a start on the same data dir.
func TestStorePersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	want := []reading{{"a", "s1", 1.5}, {"b", "s2", 2.5}, {"c", "s1", 3.5}}

	s1 := startStore(t, dir)
	c1 := connect(t, s1.addr)
	coll := c1.Database("krl").Collection("readings")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	docs := make([]any, len(want))
	for i, r := range want {
		docs[i] = r
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if got := findAll(t, coll); len(got) != len(want) {
		t.Fatalf("before restart found %v, want %v", got, want)
	}
	// Unique _id is enforced (the lab relies on it for idempotent writes).
	if _, err := coll.InsertOne(ctx, want[0]); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("duplicate insert: %v, want duplicate key error", err)
	}
	if err := c1.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("clean stop (no client connected) took %v", s1.stop().Round(time.Millisecond))
	matches, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
	if len(matches) == 0 {
		t.Fatalf("no SQLite file in %s", dir)
	}

	s2 := startStore(t, dir)
	c2 := connect(t, s2.addr)
	got := findAll(t, c2.Database("krl").Collection("readings"))
	if len(got) != len(want) {
		t.Fatalf("after restart found %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after restart doc %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Stopping with a client still connected: FerretDB waits for it up to
	// about 3 s before it closes the connection.
	took := s2.stop()
	t.Logf("stop with a client connected took %v", took.Round(time.Millisecond))
	_ = c2.Disconnect(context.Background())
}

// TestStorePortInUse: a second store on the first one's port fails fast and
// never reports listening.
func TestStorePortInUse(t *testing.T) {
	s := startStore(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sk := newSink()
	err := RunStore(ctx, StoreConfig{DataDir: t.TempDir(), Listen: s.addr}, status.NewTo("store", sk), testLogger(t))
	if err == nil || ctx.Err() != nil {
		t.Fatalf("second store on %s: err=%v ctx=%v, want an immediate error", s.addr, err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error %q does not say the address is in use", err)
	}
	if evs := sk.events(); len(evs) != 0 {
		t.Errorf("failed store emitted %v", evs)
	}
}

// TestStoreBadConfig: bad data dirs are errors, not panics; a live data dir
// is refused.
func TestStoreBadConfig(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	live := t.TempDir()
	startStore(t, live)
	for name, cfg := range map[string]StoreConfig{
		"data dir is a file": {DataDir: file, Listen: "127.0.0.1:0"},
		"no data dir":        {Listen: "127.0.0.1:0"},
		"uri characters":     {DataDir: filepath.Join(tmp, "what?"), Listen: "127.0.0.1:0"},
		"data dir in use":    {DataDir: live, Listen: "127.0.0.1:0"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := RunStore(ctx, cfg, nil, testLogger(t))
			if err == nil || ctx.Err() != nil {
				t.Fatalf("err=%v ctx=%v, want an immediate error", err, ctx.Err())
			}
			t.Logf("error: %v", err)
		})
	}
}
