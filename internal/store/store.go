// Package store is the one place that talks to MongoDB (or the embedded
// FerretDB, which speaks its wire protocol). Collections:
//
//	usage        one document per saved delta (the seed's usage records),
//	             _id "<sensor>#<seq>": the sensor's seq-th record
//	checkpoints  one document per sensor: the last message consumer-usage
//	             applied, the first one it ever checkpointed, and the
//	             summary of the sensor's records folded so far
//
// Totals are read from the summaries, so a usage answer costs one document
// per sensor however long the history (FerretDB v1 reads a whole collection
// for any query). A summary is written in the checkpoint's own single-document
// write; an orphan record (its writer died before the checkpoint) sits at the
// next seq and is folded before anything is written after it. FerretDB v1
// computes only a $group's first accumulator and is not atomic under
// concurrent updates, so sums are done here in integer cents and exactness
// depends on no transaction or compare-and-set.
package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/kafka-recovery-lab/krl/internal/redact"
)

// DefaultDatabase is used when the URI names none.
const DefaultDatabase = "krl"

const (
	usageColl      = "usage"
	checkpointColl = "checkpoints"
)

// Store is a connection to the database of the product.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
}

// Connect opens a client for uri. It does not wait for the server: call Ping
// to learn whether it is reachable (the driver retries by itself).
func Connect(ctx context.Context, uri string) (*Store, error) {
	dbName, err := databaseName(uri)
	if err != nil {
		return nil, err
	}
	opts := options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(3 * time.Second).
		SetConnectTimeout(3 * time.Second)
	client, err := mongo.Connect(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("store: %w", redact.Error(err))
	}
	return &Store{client: client, db: client.Database(dbName)}, nil
}

func databaseName(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "mongodb" && u.Scheme != "mongodb+srv") {
		return "", fmt.Errorf("store: %q is not a mongodb:// URI", redact.String(uri))
	}
	if name := strings.Trim(u.Path, "/"); name != "" {
		return name, nil
	}
	return DefaultDatabase, nil
}

// DatabaseOf is the database a URI names (DefaultDatabase when none).
func DatabaseOf(uri string) (string, error) { return databaseName(uri) }

// WithDatabase returns uri naming database db instead of its own; with
// credentials, authSource keeps naming the database they were checked
// against (the one the URI named, else admin).
func WithDatabase(uri, db string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", redact.Error(err)
	}
	if u.Scheme != "mongodb" && u.Scheme != "mongodb+srv" {
		return "", fmt.Errorf("%q is not a mongodb:// URI", redact.String(uri))
	}
	q := u.Query()
	if u.User != nil && q.Get("authSource") == "" {
		// Credentials are checked against the database the URI named.
		src := "admin"
		if p := u.Path; len(p) > 1 {
			src = p[1:]
		}
		q.Set("authSource", src)
		u.RawQuery = q.Encode()
	}
	u.Path = "/" + db
	return u.String(), nil
}

// Close disconnects.
func (s *Store) Close(ctx context.Context) error { return s.client.Disconnect(ctx) }

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error { return s.client.Ping(ctx, nil) }

// Drop removes the product's collections (fresh runs and tests).
func (s *Store) Drop(ctx context.Context) error {
	for _, c := range []string{usageColl, checkpointColl} {
		if err := s.db.Collection(c).Drop(ctx); err != nil {
			return fmt.Errorf("store: drop %s: %w", c, err)
		}
	}
	return nil
}

// DropDatabase removes the whole database (a workshop lab that is gone).
func (s *Store) DropDatabase(ctx context.Context) error {
	if err := s.db.Drop(ctx); err != nil {
		return fmt.Errorf("store: drop database %s: %w", s.db.Name(), err)
	}
	return nil
}

// Exists reports whether the store holds the database.
func (s *Store) Exists(ctx context.Context) (bool, error) {
	names, err := s.client.ListDatabaseNames(ctx, bson.M{"name": s.db.Name()})
	if err != nil {
		return false, fmt.Errorf("store: list databases: %w", err)
	}
	return len(names) > 0, nil
}
