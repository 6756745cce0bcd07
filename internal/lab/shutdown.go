package lab

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/redact"
)

// Shutdown stops the pollers and the audit, then every child (producer and
// consumers first), and closes Inputs. Nobody needs to read Inputs meanwhile.
func (l *Lab) Shutdown(ctx context.Context) error {
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range l.out {
		}
	}()
	if l.cancel != nil {
		l.cancel()
	}
	l.pollers.Wait()
	// The lab's own clients go before the children: the embedded store
	// waits for open connections before it stops, and a Kafka client whose
	// broker is gone retries until it is closed.
	l.closeClients()
	err := l.sup.Shutdown(ctx)
	if l.pumpDone != nil {
		<-l.pumpDone
	} else {
		close(l.out)
	}
	<-drained
	return err
}

func (l *Lab) closeClients() {
	if l.offsets != nil {
		l.offsets.Close()
	}
	if l.db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.db.Close(ctx)
	}
}

// KillAll SIGKILLs every child at once (signal and panic paths).
func (l *Lab) KillAll() { l.sup.KillAll() }

// OpenLog creates runDir/logs and opens runDir/logs/dashboard.log
// (appending) for a lab's own diagnostics: the terminal is the screen's.
func OpenLog(runDir string) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Join(runDir, "logs"), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(filepath.Join(runDir, "logs", "dashboard.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(redact.Writer(f), nil)), f, nil
}
