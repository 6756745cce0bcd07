package producer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-recovery-lab/krl/internal/kafkacfg"
	"github.com/kafka-recovery-lab/krl/internal/status"
)

// MaxInject bounds one injection.
const MaxInject = 10000

// injectTimeout bounds the wait for an injection's delivery reports:
// librdkafka reports every record, delivered or failed, within the
// producer's message timeout; the margin only guards against a report that
// never comes.
const injectTimeout = kafkacfg.ProducerMessageTimeout + 10*time.Second

// InjectRequest asks the publishing loop for N malformed records; the
// result comes on Reply (buffered by the sender) once every one of them
// has its delivery report.
type InjectRequest struct {
	N     int
	Reply chan InjectResult
}

// Injected is one malformed record and where it landed.
type Injected struct {
	Kind      string `json:"kind"`
	Variant   string `json:"variant"`
	Key       string `json:"key"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error,omitempty"` // delivery failed
}

// InjectResult is what an injection published.
type InjectResult struct {
	Records   []Injected `json:"records"`
	Delivered int        `json:"delivered"`
	Error     string     `json:"error,omitempty"`
}

// produceBad enqueues recs, in order, with their own delivery channel (so
// they are not counted as telemetry: a flush or a history burst counts its
// own), and returns a function that
// waits for their reports.
func (pub *publisher) produceBad(recs []BadRecord) func(context.Context) InjectResult {
	pub.mu.Lock()
	p := pub.p
	pub.mu.Unlock()
	topic := pub.cfg.Topic
	dc := make(chan kafka.Event, len(recs))
	res := InjectResult{Records: make([]Injected, len(recs))}
	enqueued := 0
	for j, r := range recs {
		res.Records[j] = Injected{Kind: string(r.Kind), Variant: r.Variant, Key: string(r.Key), Partition: -1, Offset: -1}
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            r.Key,
			Value:          r.Value,
			Opaque:         j,
		}, dc)
		if err != nil {
			res.Records[j].Error = err.Error()
			continue
		}
		enqueued++
	}
	return func(ctx context.Context) InjectResult {
		deadline := time.NewTimer(injectTimeout)
		defer deadline.Stop()
		for range enqueued {
			select {
			case ev := <-dc:
				m, ok := ev.(*kafka.Message)
				if !ok {
					continue
				}
				j, _ := m.Opaque.(int)
				if err := m.TopicPartition.Error; err != nil {
					res.Records[j].Error = err.Error()
					continue
				}
				res.Records[j].Partition, res.Records[j].Offset = m.TopicPartition.Partition, int64(m.TopicPartition.Offset)
				res.Delivered++
				pub.injected.Add(1)
			case <-deadline.C:
				res.Error = fmt.Sprintf("no delivery report within %s", injectTimeout)
				return res
			case <-ctx.Done():
				res.Error = "producer stopping"
				return res
			}
		}
		if res.Delivered < len(recs) && res.Error == "" {
			res.Error = fmt.Sprintf("%d of %d malformed records not delivered", len(recs)-res.Delivered, len(recs))
		}
		return res
	}
}

// reportInjected announces an injection on the status stream and the log.
// sent is the producer's count with them, so a paused producer's sent
// count grows by them too.
func reportInjected(em *status.Emitter, log *slog.Logger, res InjectResult, sent int64) {
	kinds := map[string]int{}
	for _, r := range res.Records {
		if r.Error == "" {
			kinds[r.Kind]++
		}
	}
	log.Warn("injected malformed records", "delivered", res.Delivered, "asked", len(res.Records), "kinds", kinds, "error", res.Error)
	em.Emit(status.Event{Type: status.BadInjected, Injected: int64(res.Delivered), Produced: sent, Error: res.Error})
}

// injectOnce is --inject-bad: sensors without a message in the topic get
// one valid message first (a backwards record needs one to go back from),
// then the malformed records are published and their deliveries awaited.
func injectOnce(ctx context.Context, cfg Config, em *status.Emitter, log *slog.Logger, pub *publisher, fleet *Fleet, known []bool) error {
	for i := range known {
		if !known[i] {
			pub.produce(fleet.Next(i, time.Now()))
		}
	}
	res := pub.produceBad(BadRecords(cfg.InjectBad, cfg.Sensors, fleet.Last))(ctx)
	reportInjected(em, log, res, pub.sent())
	left := pub.flush(ctx, stopFlushTimeout)
	if ctx.Err() != nil {
		em.Emit(status.Event{Type: status.Stopping, Reason: "signal"})
		return nil
	}
	if res.Error != "" || left > 0 || pub.failed.Load() > 0 {
		return fmt.Errorf("producer --inject-bad: %s (%d valid messages failed, %d not flushed)", res.Error, pub.failed.Load(), left)
	}
	return nil
}

// serveHTTP serves POST /inject-bad?n=N (default one of each kind): the
// request is handed to the publishing loop, and the answer lists where
// each record landed; POST /history?n=N (historyHandler) and POST
// /acks?to=all|1|0 (acksHandler). It returns a
// function that stops the server.
func serveHTTP(ctx context.Context, addr string, inject chan<- InjectRequest, history chan<- HistoryRequest, acks chan<- AcksRequest, em *status.Emitter, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /inject-bad", func(w http.ResponseWriter, r *http.Request) {
		n := BadCycle
		if s := r.URL.Query().Get("n"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > MaxInject {
				http.Error(w, fmt.Sprintf("n=%q: want a number from 1 to %d", s, MaxInject), http.StatusBadRequest)
				return
			}
			n = v
		}
		req := InjectRequest{N: n, Reply: make(chan InjectResult, 1)}
		if !handOff(ctx, w, r, inject, req) {
			return
		}
		var res InjectResult
		select {
		case res = <-req.Reply:
		case <-r.Context().Done():
			return
		}
		writeReply(w, res, res.Error != "", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("POST /history", historyHandler(ctx, history))
	mux.HandleFunc("POST /acks", acksHandler(ctx, acks))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("http server stopped", "err", err)
		}
	}()
	log.Info("http listening", "addr", ln.Addr().String())
	em.Emit(status.Event{Type: status.Listening, Endpoint: "http", Addr: ln.Addr().String()})
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// handOff gives req to the publishing loop. It reports false, having
// answered if anyone is left to answer, when the asker gave up first or
// the producer is stopping.
func handOff[Req any](ctx context.Context, w http.ResponseWriter, r *http.Request, loop chan<- Req, req Req) bool {
	select {
	case loop <- req:
		return true
	case <-r.Context().Done():
	case <-ctx.Done():
		http.Error(w, "producer stopping", http.StatusServiceUnavailable)
	}
	return false
}

// writeReply answers with the loop's reply as JSON, with failCode when
// it failed.
func writeReply(w http.ResponseWriter, reply any, failed bool, failCode int) {
	code := http.StatusOK
	if failed {
		code = failCode
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(reply)
}
