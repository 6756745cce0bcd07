package board

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/redact"
	"github.com/kafka-recovery-lab/krl/internal/role"
)

// Report is the JSON snapshot written by --report. A caller that adds fields
// (a scenario result) embeds it: encoding/json flattens embedded structs.
type Report struct {
	Brokers   string          `json:"brokers"`
	Mongo     string          `json:"mongo"`
	Processes []ReportProcess `json:"processes"`
	Sensors   []ReportSensor  `json:"sensors"`
	// Partitions: the topic's partitions as the latest successful metadata
	// read said (empty before the first).
	Partitions []ReportPartition `json:"partitions"`
	// Keys: the audit's read of the topic against the partitioner, as the
	// partitions view (t) shows it; null before the audit's first read.
	Keys *ReportKeys `json:"keys"`
	// DriftCausesByKind sums every sensor's drift_causes per kind (an
	// empty object without causes).
	DriftCausesByKind map[string]ReportCauseKind `json:"drift_causes_by_kind"`
	// Acks: the producer's acks setting and what became of the writes it
	// was told were acknowledged (acks.go).
	Acks ReportAcks `json:"acks"`
	// MovedKeys: the sensors whose key moved to another partition when
	// partitions were added, as the audit read the topic (empty: none).
	MovedKeys []ReportMovedKey `json:"moved_keys"`
	// Retention: the short retention the lab set, what it deleted and what
	// of it the audit never read.
	Retention ReportRetention `json:"retention"`
	// MalformedRecords: usage records of a consumer of the user's that
	// break the schema, by reason: never summed.
	MalformedRecords map[string]int `json:"malformed_records,omitempty"`
}

// ReportRetention is the topic's short retention (retention_ms 0: the
// lab set none), the offset ranges the log starts moved over in this run,
// and the ranges the audit could not read (deleted before it got there).
type ReportRetention struct {
	RetentionMs  int64         `json:"retention_ms"`
	Deleted      []ReportRange `json:"deleted"`
	AuditSkipped []ReportRange `json:"audit_skipped"`
	// Forgotten: the sensors the running consumer-current could not
	// rebuild because retention deleted their last message (the sensors
	// panel's list).
	Forgotten []ReportForgotten `json:"forgotten"`
}

// ReportForgotten is a sensor consumer-current's replay could not rebuild:
// its last message and when retention deleted it (deleted_at null:
// before this run).
type ReportForgotten struct {
	Sensor    string     `json:"sensor"`
	Partition int32      `json:"partition"`
	Offset    int64      `json:"offset"`
	DeletedAt *time.Time `json:"deleted_at"`
}

// ReportRange is the offsets first..last of a partition.
type ReportRange struct {
	Partition int32 `json:"partition"`
	First     int64 `json:"first"`
	Last      int64 `json:"last"`
}

// reportRetention is the report's retention section.
func (b *Board) reportRetention() ReportRetention {
	r := ReportRetention{RetentionMs: b.ret.setting.Milliseconds(), Deleted: []ReportRange{}, AuditSkipped: []ReportRange{},
		Forgotten: []ReportForgotten{}}
	for _, f := range b.Sensors().Forgotten {
		rf := ReportForgotten{Sensor: f.SensorID, Partition: f.Partition, Offset: f.Offset}
		if !f.DeletedAt.IsZero() {
			at := f.DeletedAt
			rf.DeletedAt = &at
		}
		r.Forgotten = append(r.Forgotten, rf)
	}
	for _, d := range b.ret.deleted {
		r.Deleted = append(r.Deleted, ReportRange{Partition: d.Partition, First: d.First, Last: d.Last})
	}
	for _, s := range b.ret.auditSkipped {
		r.AuditSkipped = append(r.AuditSkipped, ReportRange{Partition: s.Partition, First: s.First, Last: s.Last})
	}
	return r
}

// ReportMovedKey is one sensor's key moving from one partition to
// another: FirstOffset is its first record in To.
type ReportMovedKey struct {
	Sensor      string `json:"sensor"`
	From        int32  `json:"from"`
	To          int32  `json:"to"`
	FirstOffset int64  `json:"first_offset"`
}

// ReportCause is one message whose recorded usage differs from what the
// topic yields for it: recorded − expected summed over a sensor's causes
// is its drift.
type ReportCause struct {
	Kind      string  `json:"kind"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Writer    string  `json:"writer"`
	Records   int     `json:"records"`
	RecHours  float64 `json:"recorded_hours"`
	RecKm     float64 `json:"recorded_km"`
	ExpHours  float64 `json:"expected_hours"`
	ExpKm     float64 `json:"expected_km"`
	// Inferred: matched to its records by their deltas (they name no message).
	Inferred bool `json:"inferred,omitempty"`
}

// ReportCauseKind is one kind's causes over every sensor.
type ReportCauseKind struct {
	Messages   int     `json:"messages"`
	DriftHours float64 `json:"drift_hours"`
	DriftKm    float64 `json:"drift_km"`
}

// ReportKeys is the partitions view's keys line.
type ReportKeys struct {
	Sensors    int      `json:"sensors"`
	Records    int64    `json:"records"`
	Disordered int64    `json:"disordered"`
	Scattered  []string `json:"scattered"`
	// Through: per partition, the offset after the last record the audit
	// had read: Records counts the valid records below it.
	Through map[int32]int64 `json:"through"`
}

// ReportPartition is one partition of the topic.
type ReportPartition struct {
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"` // node id; -1: no leader
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
	// HighWatermark: null when not read yet; LogStart: the first offset
	// still in the log, read with it (null when not read yet).
	HighWatermark *int64 `json:"high_watermark"`
	LogStart      *int64 `json:"log_start"`
	// Committed: per consumer group, its committed offset (a group without
	// a commit here is absent).
	Committed map[string]int64 `json:"committed"`
	// Sensors: the sensor ids whose key the producer's partitioner puts
	// here; SensorsMisplaced those of them consumer-current last read from
	// another partition (empty when the partitioner is right).
	Sensors          []string `json:"sensors"`
	SensorsMisplaced []string `json:"sensors_misplaced"`
	// MinISR: the topic's min.insync.replicas (0 unknown); an ISR smaller
	// makes acks=all writes fail with NOT_ENOUGH_REPLICAS.
	MinISR int `json:"min_insync_replicas"`
}

// ReportProcess is one supervised process.
type ReportProcess struct {
	Name    string `json:"name"`
	State   string `json:"state"` // a State word: running, crashed, stopped, ...
	PID     int    `json:"pid"`
	Starts  int    `json:"starts"`
	Crashes int    `json:"crashes"`
	// Lag in messages; null when it does not apply or is not fully known.
	Lag *int64 `json:"lag"`
	// LagStatus: the lag judged over the last 10 s as Burrow does (OK,
	// WARN, STALL, STOP; "" before 10 s of samples or without Kafka lag).
	LagStatus string `json:"lag_status,omitempty"`
	// Mode and Reset: consumer-usage only.
	Mode  string `json:"mode,omitempty"`
	Reset string `json:"reset,omitempty"`
	// LastExit: "SIGKILL", "exit 1", ... of the latest exit, if any.
	LastExit string `json:"last_exit,omitempty"`
	// LastError: the reason the process gave for failing since its latest
	// start (its Error event), null if none.
	LastError *string `json:"last_error"`
	// Redelivered (consumer-usage): messages delivered again at its latest
	// start, i.e. processed before but behind the committed offsets; null
	// until known.
	Redelivered *int64 `json:"redelivered,omitempty"`
	// Produced (producer): records the broker acknowledged since its
	// latest start, injected malformed ones included.
	Produced *int64 `json:"produced,omitempty"`
	// Health: ok, stuck, down or frozen (HealthView.Word; ok for a live
	// consumer whose /healthz has not been read yet).
	Health string `json:"health"`
	// Invalid: messages the process skipped as invalid since it (its
	// current or latest incarnation) started, as it last reported; null for
	// the processes that read no messages (producer, consumer-query,
	// broker, store). LastInvalid is the reason of the latest one.
	Invalid     *int64 `json:"invalid"`
	LastInvalid string `json:"last_invalid,omitempty"`

	// Every consumer-usage instance (consumer-usage, consumer-usage-2,
	// consumer-usage-3) has Partitions (the partitions it owns now; an
	// empty list when none, or while it is down or between a revoke and
	// the next assignment), Prevented and Late (since its latest start:
	// usage records the store refused as second effects, and records
	// written after their partition was revoked). Member and Generation
	// are those of its latest rebalance (empty/0 before one),
	// EffectDelayMs how long it holds each write.
	Partitions    []int32 `json:"partitions,omitzero"`
	Prevented     *int64  `json:"prevented,omitempty"`
	Late          *int64  `json:"late,omitempty"`
	Member        string  `json:"member,omitempty"`
	Generation    int32   `json:"generation,omitempty"`
	EffectDelayMs *int64  `json:"effect_delay_ms,omitempty"`
	// Buffered and BlockedCause (producer): records enqueued and not
	// acknowledged while it is blocked (absent when it is not), and why.
	Buffered     *int64 `json:"buffered,omitempty"`
	BlockedCause string `json:"blocked_cause,omitempty"`
	// consumer-current: Rebuild is the strategy of its next start
	// (replay, snapshot, changelog); Rebuilds one entry per start, oldest
	// first.
	Rebuild  string          `json:"rebuild,omitempty"`
	Rebuilds []ReportRebuild `json:"rebuilds,omitzero"`
}

// ReportRebuild is one start of consumer-current: the strategy it started
// with, the records it read to catch up (the changelog's and the topic's)
// and the milliseconds from its start to caught_up (both null until it
// caught up), why it replayed the topic instead (null when it did not),
// and the records of the topic below where it caught up (null until then).
type ReportRebuild struct {
	Strategy    string  `json:"strategy"`
	RecordsRead *int64  `json:"records_read"`
	Millis      *int64  `json:"millis"`
	FellBack    *string `json:"fell_back"`
	History     *int64  `json:"history"`
}

// ReportSensor is one sensor: what each side says about it.
type ReportSensor struct {
	SensorID string         `json:"sensor_id"`
	Current  *ReportCurrent `json:"current"`
	Usage    *ReportUsage   `json:"usage"`
	Truth    *ReportTruth   `json:"truth"`
	Drift    *ReportDrift   `json:"drift"`
	// DriftCauses are the messages that make Drift (empty when it is
	// exact or there is no comparison).
	DriftCauses []ReportCause `json:"drift_causes"`
	// Verdict is the usage panel's word for the sensor: exact,
	// over-counted, lost, mixed, or pending while the audit has not read as
	// far as the records (drift is then null); empty without a comparison.
	Verdict string `json:"verdict,omitempty"`
}

// ReportCurrent is consumer-current's state of the sensor.
type ReportCurrent struct {
	Timestamp int64   `json:"timestamp"`
	HoursTot  float64 `json:"hours_tot"`
	KmTot     float64 `json:"km_tot"`
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
}

// ReportUsage is consumer-query's answer for the sensor.
type ReportUsage struct {
	Hours   float64 `json:"hours"`
	Km      float64 `json:"km"`
	Records int64   `json:"records"`
	// Through is the furthest usage record the totals include, from the
	// same read (null without records): the end of the window the
	// expected usage and the drift are computed over.
	Through *ReportPosition `json:"through,omitempty"`
}

// ReportPosition is a place in the topic.
type ReportPosition struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// ReportTruth is the audit's view: the latest message and the usage
// expected over exactly the records the usage answer covered (0 without
// a window or while the audit has not read that far).
type ReportTruth struct {
	Timestamp  int64   `json:"timestamp"`
	HoursTot   float64 `json:"hours_tot"`
	KmTot      float64 `json:"km_tot"`
	UsageHours float64 `json:"usage_hours"`
	UsageKm    float64 `json:"usage_km"`
}

// ReportDrift is recorded − expected usage.
type ReportDrift struct {
	Hours float64 `json:"hours"`
	Km    float64 `json:"km"`
}

// Report returns the snapshot with the same rules as the panels: current is
// null unless consumer-current's state is live (or rebuilding/old by less
// than a few polls), usage is null while consumer-query cannot answer, drift
// is null unless both usage and an expected window exist. Take it while the
// children still run (before stopping them on quit).
func (b *Board) Report() Report {
	r := Report{Brokers: b.cfg.Brokers, Mongo: redact.String(b.cfg.Mongo), Processes: []ReportProcess{}, Sensors: []ReportSensor{}}
	pv := b.Partitions()
	r.Partitions = reportPartitions(pv)
	r.MovedKeys = []ReportMovedKey{}
	r.Retention = b.reportRetention()
	if len(b.malformed) > 0 {
		r.MalformedRecords = maps.Clone(b.malformed)
	}
	for _, m := range b.moves.audit {
		r.MovedKeys = append(r.MovedKeys, ReportMovedKey{Sensor: m.Sensor, From: m.From, To: m.To, FirstOffset: m.FirstOffset})
	}
	if k := pv.Keys; k.Seen {
		r.Keys = &ReportKeys{Sensors: k.Keys, Records: k.Records, Disordered: k.Disordered, Scattered: append([]string{}, k.Scattered...), Through: maps.Clone(k.Through)}
	}
	for _, pv := range b.Processes() {
		rp := reportProcess(pv)
		if pv.Name == Current {
			rp.Rebuild, rp.Rebuilds = b.rebuild, reportRebuilds(b.rebuilds)
		}
		r.Processes = append(r.Processes, rp)
	}
	r.Acks = b.reportAcks()
	sensors := b.reportSensors()
	byKind := map[string]*Drift{}
	r.DriftCausesByKind = map[string]ReportCauseKind{}
	for _, id := range slices.Sorted(maps.Keys(sensors)) {
		s := sensors[id]
		if s.DriftCauses == nil {
			s.DriftCauses = []ReportCause{}
		}
		for _, c := range s.DriftCauses {
			k := r.DriftCausesByKind[c.Kind]
			d := byKind[c.Kind]
			if d == nil {
				d = &Drift{}
				byKind[c.Kind] = d
			}
			d.HoursCents += cents(c.RecHours) - cents(c.ExpHours)
			d.KmCents += cents(c.RecKm) - cents(c.ExpKm)
			k.Messages++
			k.DriftHours, k.DriftKm = d.Hours(), d.Km()
			r.DriftCausesByKind[c.Kind] = k
		}
		r.Sensors = append(r.Sensors, *s)
	}
	return r
}

func reportPartitions(pv PartitionsView) []ReportPartition {
	out := []ReportPartition{}
	for _, row := range pv.Rows {
		rp := ReportPartition{Partition: row.Partition, Leader: row.Leader,
			Replicas: append([]int32{}, row.Replicas...), ISR: append([]int32{}, row.ISR...),
			Committed: map[string]int64{}, Sensors: append([]string{}, row.Sensors...),
			SensorsMisplaced: append([]string{}, row.Misplaced...), MinISR: pv.MinISR}
		if row.HighWatermark >= 0 {
			hw := row.HighWatermark
			rp.HighWatermark = &hw
		}
		if row.LogStart >= 0 {
			start := row.LogStart
			rp.LogStart = &start
		}
		if row.Committed >= 0 && pv.Group != "" {
			rp.Committed[pv.Group] = row.Committed
		}
		out = append(out, rp)
	}
	return out
}

func reportProcess(pv ProcView) ReportProcess {
	rp := ReportProcess{
		Name: pv.Name, State: string(pv.State), PID: pv.PID,
		Starts: pv.Starts, Crashes: pv.Crashes, Health: pv.Health.Word, LagStatus: string(pv.LagStatus),
	}
	if pv.Lag.Known() {
		rp.Lag = ptr(pv.Lag.Messages)
	}
	if pv.Usage != nil {
		reportUsageInstance(&rp, *pv.Usage)
	}
	if pv.LastExit != nil {
		rp.LastExit = pv.LastExit.Label()
	}
	if pv.LastError != "" {
		rp.LastError = ptr(pv.LastError)
	}
	if role.Lookup(pv.Name).Lag == role.LagSent && pv.Alive {
		rp.Produced = ptr(pv.Producer.Produced)
	}
	if pv.Producer != nil && pv.Producer.Blocked > 0 {
		rp.Buffered, rp.BlockedCause = ptr(pv.Producer.Buffered), pv.Producer.BlockedCause
	}
	if rp.Health == "" {
		rp.Health = HealthOK
	}
	if ReadsMessages(pv.Name) {
		rp.Invalid, rp.LastInvalid = ptr(pv.Invalid), pv.LastInvalid
	}
	return rp
}

// reportUsageInstance adds what a consumer-usage instance reports.
func reportUsageInstance(rp *ReportProcess, pv UsageProcView) {
	rp.Mode, rp.Reset = pv.Mode, pv.Reset
	rp.Partitions = append([]int32{}, pv.Partitions...)
	rp.Prevented, rp.Late, rp.EffectDelayMs = ptr(pv.Prevented), ptr(pv.Late), ptr(pv.EffectDelay.Milliseconds())
	rp.Member, rp.Generation = pv.Member, pv.Generation
	if pv.Redelivered >= 0 {
		rp.Redelivered = ptr(pv.Redelivered)
	}
}

func ptr[T any](v T) *T { return &v }

func reportRebuilds(runs []RebuildRun) []ReportRebuild {
	out := []ReportRebuild{}
	for _, r := range runs {
		rr := ReportRebuild{Strategy: r.Strategy}
		if r.Done {
			rr.RecordsRead, rr.Millis, rr.History = ptr(r.RecordsRead()), ptr(r.Millis), ptr(r.History)
		}
		if r.FellBack != "" {
			rr.FellBack = ptr(r.FellBack)
		}
		out = append(out, rr)
	}
	return out
}

// reportSensors is every sensor's lines: consumer-current's state, the
// usage consumer-query answers, the drift and the audit's truth.
func (b *Board) reportSensors() map[string]*ReportSensor {
	sensors := map[string]*ReportSensor{}
	get := func(id string) *ReportSensor {
		if s := sensors[id]; s != nil {
			return s
		}
		s := &ReportSensor{SensorID: id}
		sensors[id] = s
		return s
	}
	if sv := b.Sensors(); sv.Status == Live || sv.Status == Rebuilding || sv.Status == Stale {
		for _, row := range sv.Rows {
			if row.Stale && sv.Status != Stale {
				continue
			}
			get(row.SensorID).Current = &ReportCurrent{
				Timestamp: row.Timestamp, HoursTot: row.HoursTot, KmTot: row.KmTot, Lat: row.Lat, Lon: row.Lon,
			}
		}
	}
	expected := map[string]Amount{}
	for _, row := range b.Usage().Rows {
		reportUsageRow(get(row.SensorID), row)
		if row.Expected != nil {
			expected[row.SensorID] = *row.Expected
		}
	}
	for id, t := range b.truth {
		if t.Last == nil {
			continue
		}
		rt := &ReportTruth{Timestamp: t.Last.Timestamp, HoursTot: t.Last.HoursTot, KmTot: t.Last.KmTot}
		if e, ok := expected[id]; ok {
			rt.UsageHours, rt.UsageKm = round2(e.Hours()), round2(e.Km())
		}
		get(id).Truth = rt
	}
	return sensors
}

func reportUsageRow(s *ReportSensor, row UsageRow) {
	if row.Recorded != nil {
		s.Usage = &ReportUsage{Hours: round2(row.Recorded.Hours()), Km: round2(row.Recorded.Km()), Records: row.Recorded.Records}
		if row.Recorded.Records > 0 {
			s.Usage.Through = &ReportPosition{Partition: row.Recorded.Partition, Offset: row.Recorded.Offset}
		}
	}
	if row.Drift != nil {
		s.Drift = &ReportDrift{Hours: row.Drift.Hours(), Km: row.Drift.Km()}
	}
	for _, c := range row.Causes {
		s.DriftCauses = append(s.DriftCauses, ReportCause{Kind: c.Kind, Partition: c.Partition, Offset: c.Offset,
			Writer: c.Writer, Records: c.Records,
			RecHours: float64(c.RecordedHoursCents) / 100, RecKm: float64(c.RecordedKmCents) / 100,
			ExpHours: float64(c.ExpectedHoursCents) / 100, ExpKm: float64(c.ExpectedKmCents) / 100, Inferred: c.Inferred})
	}
	s.Verdict = string(row.Verdict)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// ReadsMessages tells the processes that read the topic's messages, and so
// count the invalid ones.
func ReadsMessages(name string) bool { return role.Lookup(name).Lag.ReadsMessages() }
