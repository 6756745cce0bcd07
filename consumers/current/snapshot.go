package current

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/api"
	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// snapshotVersion is the snapshot file's format; another is not read.
const snapshotVersion = 1

// snapshot is the file a snapshot strategy restarts from: the state and
// the per-partition offsets it covers, as of TakenAt.
type snapshot struct {
	Version int    `json:"version"`
	Topic   string `json:"topic"`
	// TopicID tells the topic apart from an earlier one of the same name
	// (a topic deleted and created again starts its offsets over); empty
	// when the broker did not say it.
	TopicID string    `json:"topic_id"`
	TakenAt time.Time `json:"taken_at"`
	// Through is, per partition, the offset after the last record the
	// state covers: the reading starts there.
	Through    map[int32]int64       `json:"through"`
	Sensors    []api.SensorState     `json:"sensors"`
	References []telemetry.Reference `json:"references"`
}

// snapshotTrailer ends the file: the body's length and CRC-32, so that a
// file cut short or changed on disk is refused rather than half believed.
const snapshotTrailer = "\nkrl-snapshot"

// encodeSnapshot is the file's bytes: the JSON body, then the trailer
// line "krl-snapshot LEN CRC".
func encodeSnapshot(s snapshot) ([]byte, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(body, "%s %d %08x\n", snapshotTrailer, len(body), crc32.ChecksumIEEE(body)), nil
}

// decodeSnapshot reads a file's bytes back, refusing anything but a whole
// file of this format.
func decodeSnapshot(b []byte) (snapshot, error) {
	i := bytes.LastIndex(b, []byte(snapshotTrailer+" "))
	if i < 0 {
		return snapshot{}, errors.New("no trailer (cut short, or not a snapshot)")
	}
	body := b[:i]
	var n int
	var sum uint32
	if _, err := fmt.Sscanf(string(b[i+len(snapshotTrailer):]), " %d %08x\n", &n, &sum); err != nil {
		return snapshot{}, fmt.Errorf("trailer: %w", err)
	}
	if n != len(body) || crc32.ChecksumIEEE(body) != sum {
		return snapshot{}, fmt.Errorf("checksum mismatch (%d bytes, trailer says %d)", len(body), n)
	}
	var s snapshot
	if err := json.Unmarshal(body, &s); err != nil {
		return snapshot{}, err
	}
	if s.Version != snapshotVersion {
		return snapshot{}, fmt.Errorf("format version %d, want %d", s.Version, snapshotVersion)
	}
	for _, st := range s.Sensors {
		if next, ok := s.Through[st.Partition]; !ok || st.Offset >= next {
			return snapshot{}, fmt.Errorf("sensor %s at %d/%d is past the offsets the snapshot covers", st.SensorID, st.Partition, st.Offset)
		}
	}
	return s, nil
}

// errNoSnapshot: the file does not exist (nothing written yet).
var errNoSnapshot = errors.New("no snapshot written yet")

// loadSnapshot reads the snapshot at path.
func loadSnapshot(path string) (snapshot, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshot{}, errNoSnapshot
	}
	if err != nil {
		return snapshot{}, err
	}
	return decodeSnapshot(b)
}

// writeSnapshot replaces the file at path with s atomically: the bytes go
// to a temporary file beside it, which is synced and then renamed over
// it, and the directory is synced. A crash at any moment leaves either
// the previous snapshot or the new one whole, never a mix. midWrite, when
// not nil, runs with half of the bytes written and synced (the crash
// point inside the write).
func writeSnapshot(path string, s snapshot, midWrite func()) (err error) {
	b, err := encodeSnapshot(s)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	half := len(b) / 2
	if _, err = tmp.Write(b[:half]); err != nil {
		return err
	}
	if midWrite != nil {
		if err = tmp.Sync(); err != nil {
			return err
		}
		midWrite()
	}
	if _, err = tmp.Write(b[half:]); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// removeStaleTemps deletes what writes cut short by a crash left beside
// path.
func removeStaleTemps(path string) {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), filepath.Base(path)+".tmp-*"))
	for _, f := range old {
		_ = os.Remove(f)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// offsetsText is "0:1200 1:1180 2:1301".
func offsetsText(m map[int32]int64) string {
	var b []byte
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(append(strconv.AppendInt(b, int64(p), 10), ':'), m[p], 10)
	}
	return string(b)
}
