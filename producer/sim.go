package producer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/kafka-recovery-lab/krl/internal/telemetry"
)

// The simulation runs faster than the wall clock: one message stands for a
// few minutes of machine time, so that consecutive messages of a working
// machine differ by at least 0.01 h and the delta rule records something.
const (
	// Engine hours a working machine adds per message (uniform).
	minHoursStep, maxHoursStep = 0.05, 0.20
	// Kilometres per engine hour of a machine (uniform per machine):
	// excavators and loaders crawl around their site.
	minKmPerHour, maxKmPerHour = 1.0, 4.0
	// Messages a machine stays working / idle before switching (uniform).
	minWorking, maxWorking = 5, 40
	minIdle, maxIdle       = 3, 15
	// How far a machine wanders from its site centre before turning back.
	siteRadiusKm = 1.5
	kmPerDegree  = 111.32
)

// SensorID names sensor i (0-based) of a fleet of n: "sensor-01".."sensor-10".
func SensorID(i, n int) string {
	width := max(2, len(strconv.Itoa(n)))
	return fmt.Sprintf("sensor-%0*d", width, i+1)
}

// Fleet generates the telemetry of n machines. Each machine has its own
// random source derived from the seed and its index, so the sequence of
// values of one sensor depends only on the seed and where it starts from,
// not on how calls for different sensors interleave.
type Fleet struct {
	machines []*machine
}

type machine struct {
	rng      *rand.Rand
	last     telemetry.Message
	site     telemetry.Position // centre the machine wanders around
	kmPerH   float64
	heading  float64 // radians, 0 = north
	working  bool
	stateFor int // messages left in the current working/idle spell
}

// NewFleet creates n machines. A machine whose sensor id is in last
// continues from that message (odometers and position); the others start
// with plausible random counters at a random site in northern Italy.
func NewFleet(seed int64, n int, last map[string]telemetry.Message) *Fleet {
	f := &Fleet{machines: make([]*machine, n)}
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)+1))
		m := &machine{rng: rng, kmPerH: uniform(rng, minKmPerHour, maxKmPerHour)}
		id := SensorID(i, n)
		// A fresh machine: plausible counters at a site in northern Italy.
		// The draws are made even when continuing, so the rest of a
		// machine's sequence depends only on the seed.
		hours := telemetry.Round2(uniform(rng, 50, 3000))
		km := telemetry.Round2(hours * m.kmPerH * uniform(rng, 0.8, 1.2))
		m.site = telemetry.Position{Lat: round6(uniform(rng, 44.5, 46.0)), Lon: round6(uniform(rng, 8.0, 12.5))}
		m.last = telemetry.Message{SensorID: id, Odometry: telemetry.Odometry{HoursTot: hours, KmTot: km}, Position: m.site}
		if prev, ok := last[id]; ok {
			// Continue where the topic says the machine is: never reset.
			m.last = prev
			m.site = prev.Position
		}
		m.heading = uniform(m.rng, 0, 2*math.Pi)
		m.working = m.rng.IntN(3) > 0
		m.stateFor = m.spell()
		f.machines[i] = m
	}
	return f
}

// Last returns the last message generated for machine i (or the one it
// continued from).
func (f *Fleet) Last(i int) telemetry.Message { return f.machines[i].last }

// Next advances machine i by one message stamped now (or 1 ms after its
// previous message, if the clock is behind it) and returns it. Odometers
// never decrease; an idle machine repeats its counters and position.
func (f *Fleet) Next(i int, now time.Time) telemetry.Message {
	m := f.machines[i]
	if m.stateFor <= 0 {
		m.working = !m.working
		m.stateFor = m.spell()
	}
	m.stateFor--

	next := m.last
	next.Timestamp = max(now.UnixMilli(), m.last.Timestamp+1)
	if m.working {
		dh := uniform(m.rng, minHoursStep, maxHoursStep)
		dkm := dh * m.kmPerH * uniform(m.rng, 0.5, 1.5)
		next.Odometry.HoursTot = telemetry.Round2(m.last.Odometry.HoursTot + dh)
		next.Odometry.KmTot = telemetry.Round2(m.last.Odometry.KmTot + dkm)
		next.Position = m.move(dkm)
	}
	m.last = next
	return next
}

func (m *machine) spell() int {
	if m.working {
		return minWorking + m.rng.IntN(maxWorking-minWorking+1)
	}
	return minIdle + m.rng.IntN(maxIdle-minIdle+1)
}

// move drives distKm along a wandering heading, turning back towards the
// site centre once the machine is too far from it.
func (m *machine) move(distKm float64) telemetry.Position {
	p := m.last.Position
	m.heading += uniform(m.rng, -0.6, 0.6)
	northKm := (p.Lat - m.site.Lat) * kmPerDegree
	eastKm := (p.Lon - m.site.Lon) * kmPerDegree * math.Cos(p.Lat*math.Pi/180)
	if math.Hypot(northKm, eastKm) > siteRadiusKm {
		m.heading = math.Atan2(-eastKm, -northKm) + uniform(m.rng, -0.3, 0.3)
	}
	lat := p.Lat + distKm*math.Cos(m.heading)/kmPerDegree
	lat = math.Max(-89.9, math.Min(89.9, lat))
	lon := p.Lon + distKm*math.Sin(m.heading)/(kmPerDegree*math.Cos(lat*math.Pi/180))
	if lon > 180 {
		lon -= 360
	} else if lon < -180 {
		lon += 360
	}
	return telemetry.Position{Lat: round6(lat), Lon: round6(lon)}
}

func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + rng.Float64()*(hi-lo) }

// round6 keeps positions at about 10 cm resolution, like a GPS fix.
func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }
