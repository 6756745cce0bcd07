package scenario

import (
	"time"

	"github.com/kafka-recovery-lab/krl/internal/action"
	"github.com/kafka-recovery-lab/krl/internal/board"
)

// replayTimeout bounds a replay of the whole topic by consumer-usage: naive
// writes two documents per message, and after an hour of publishing the
// topic holds tens of thousands.
const replayTimeout = 10 * time.Minute

// replayShown is how long the replay lesson makes consumer-current's
// rebuild last (its progress on screen), by giving the topic a history.
const replayShown = 3 * time.Second

// catalog is every scenario, in teaching order. The names are a contract
// (--scenario NAME, workshop notes). Narration paraphrases the seed article
// ("Kafka crash recovery: three strategies for three kinds of state").
var catalog = []Scenario{
	{
		Name:    "replay",
		Title:   "Strategy 1: full replay from earliest",
		Summary: "crash consumer-current, watch it rebuild from earliest, state identical after",
		Rebuild: "replay",
		Article: "consumer-current keeps the last message of each sensor in an in-memory dictionary: when it " +
			"crashes it loses everything. It recovers by re-reading the whole topic: a new random group.id " +
			"at every restart and auto.offset.reset=earliest. Rebuilding is a pure overwrite by key, so the " +
			"result is identical however many times it is repeated; the price is startup time.",
		Steps: []Step{
			{
				Title: "Give the topic a history",
				Say: "A topic of a few minutes replays in a blink. The dashboard times a replay of consumer-current " +
					"and has the producer publish a burst of history (the fleet's next messages, real telemetry) " +
					"until one replay takes about " + replayShown.String() + ". consumer-usage does not count the " +
					"burst: it stops, and starts again from the end of the topic on a new baseline.",
				Watch: "The producer's sent count jumps with each burst and consumer-current replays to time it " +
					"(replaying N% in its row); the watch line says how many messages are published and why; " +
					"consumer-usage stops, then runs in a new group (the line under the table).",
				Event: "history:",
				Do:    "history " + replayShown.String(),
				Until: stackReady, Stable: time.Second,
			},
			{
				Title: "Freeze the fleet",
				Say: "The dashboard pauses the producer so the topic stands still: what consumer-current holds " +
					"now is exactly what its replay must rebuild.",
				Watch: "Sensors panel: audit same on every row (the audit read the same last message of the sensor).",
				Do:    "pause producer",
				Until: fleetFrozen, Stable: 1500 * time.Millisecond,
				Mark: "before",
			},
			{
				Title: "Crash consumer-current",
				Say: "A SIGKILL: no cleanup, no commit. Its dictionary lived only in memory, so the whole " +
					"state is gone.",
				Watch: "The process row turns red (crashed (SIGKILL)); the sensors panel says DOWN and STALE and " +
					"greys its last values (audit stale) instead of passing them off as live.",
				Press: &Press{Action: action.Crash, Process: board.Current},
				Until: currentDown,
			},
			{
				Title: "Restart: replay from earliest",
				Say: "It starts with a fresh random group, so Kafka has no offset for it, and earliest sends it " +
					"to the first message. Every message is read again; only the last one per sensor survives.",
				Watch: "replaying N% in its row and REBUILDING with a progress bar in the sensors panel, then the " +
					"watch line \"caught up after N messages in T s\"; the checks name the old group and the new one.",
				Event: "caught up after",
				Press: &Press{Action: action.Restart, Process: board.Current},
				Until: currentRebuilt, Stable: time.Second,
				Tell: rebuilt,
				Mark: "after",
			},
			{
				Title: "Resume the producer",
				Say:   "Same state as before the crash, rebuilt from the log alone: the operation is idempotent.",
				Watch: "The producer's sent count grows again; the sensors stay LIVE.",
				Do:    "resume producer",
			},
		},
		Checks: []Check{
			stateIdentical("before", "after"),
			replayedWholeTopic("before", "after"),
			replayWatchable("after", replayShown*2/3),
			matchesAudit("after"),
		},
		Cleanup: "resume producer",
	},
	rebuildCost,
	{
		Name:       "checkpoint-and-skip",
		Title:      "Strategy 2: checkpoint and skip",
		Summary:    "crash consumer-usage, watch its broker lag grow, restart, resume from the committed offset",
		UsageMode:  "naive",
		UsageReset: "latest",
		Article: "consumer-usage adds one usage record per delta, so replaying the topic would count usage " +
			"twice. It keeps a checkpoint per sensor in MongoDB and a fixed group.id (\"demo-usage\"): Kafka " +
			"remembers the last committed offset and, after a restart, puts the consumer back where it " +
			"stopped; latest only matters for a group without offsets. The article expects to lose at " +
			"most one delta per sensor.",
		Steps: []Step{
			{
				Title: "Steady state",
				Say: "consumer-usage runs as in the article: naive mode, fixed group, reset latest, " +
					"auto-commit. The dashboard pauses the producer a moment to measure the usage drift exactly.",
				Watch: "Its lag (high watermark − committed offset, read from the broker) at or near 0.",
				Until: stackReady, Stable: time.Second,
				Then: measure,
				Mark: "running",
			},
			{
				Title: "Crash consumer-usage",
				Say:   "Publishing again. A SIGKILL: what it processed after its last auto-commit is not committed.",
				Watch: "crashed (SIGKILL) in its row.",
				Do:    "resume producer",
				Press: &Press{Action: action.Crash, Process: board.Usage},
				// Two polls of the committed offsets after the death: the
				// last auto-commit before the SIGKILL is in them.
				Hold: 1500 * time.Millisecond,
				Mark: "crashed",
			},
			{
				Title: "Dead: its lag grows",
				Say: "The producer keeps publishing. The group's committed offsets stay where they were, so " +
					"the lag, computed from the broker at display time, keeps growing.",
				Watch: "The lag number and its sparkline climb while the process is dead.",
				Hold:  6 * time.Second,
				Mark:  "dead",
			},
			{
				Title: "Restart from the commits",
				Say: "Same group, so Kafka hands back the committed offsets: it reads exactly what it missed, " +
					"computing deltas from the checkpoints it loads from the store.",
				Watch: "The lag falls back to 0; the sparkline shows the spike and the recovery.",
				Press: &Press{Action: action.Restart, Process: board.Usage},
				Until: usageResumed, Stable: 500 * time.Millisecond,
				Mark: "resumed",
			},
			{
				Title: "What the crash cost",
				Say: "Paused again to count exactly: every delta of the messages produced while it was dead " +
					"is there. Messages it had applied after the last auto-commit were read and applied again.",
				Watch: "The drift columns: 0 or above, the verdict exact or overcount, never lost.",
				Then:  measure,
				Mark:  "quiet",
			},
			{
				Title: "Publishing again",
				Say: "Checkpoint and skip loses nothing here (the checkpoint bridges any gap); its price is the " +
					"window between processing and commit, replayed after a crash.",
				Do: "resume producer",
			},
		},
		Checks: []Check{
			lagGrewWhileDead("crashed", "dead"),
			resumedFromCommitted("dead", "resumed"),
			caughtUpAgain("dead", "resumed"),
			nothingLost("running", "quiet"),
		},
		Cleanup: "resume producer",
	},
	{
		Name:       "non-atomic-window",
		Title:      "The non-atomic window: delta written, checkpoint not",
		Summary:    "crash consumer-usage between delta and checkpoint: drift appears; guarded closes the window",
		UsageMode:  "naive",
		UsageReset: "latest",
		Baseline:   true,
		Article: "The delta insert and the checkpoint update are two separate MongoDB writes, not one " +
			"transaction. A crash after the delta and before the checkpoint leaves the old checkpoint: at " +
			"restart the same delta is computed again. The article calls the error small (about one " +
			"polling interval) but real.",
		Steps: []Step{
			{
				Title: "Measure the drift",
				Say: "The usage panel compares what consumer-usage recorded with what the topic says it " +
					"should have (an independent audit): drift = recorded − expected. The dashboard pauses the " +
					"producer a moment so both count the same messages.",
				Watch: "The drift columns and the verdict of the total row.",
				Until: stackReady, Stable: time.Second,
				Then: measure,
				Mark: "before",
			},
			{
				Title: "Crash inside the window",
				Say: "Publishing again. The crash point after-delta makes consumer-usage SIGKILL itself right " +
					"after a usage record is written and before its checkpoint is.",
				Watch: "\"crash point after-delta reached\" on the watch line, then crashed (SIGKILL) in its row.",
				Event: "crash point after-delta reached",
				Do:    "resume producer",
				Press: &Press{Action: action.CrashAt, Process: board.Usage},
				Mark:  "crashed",
			},
			resumedStep("Restart (naive)",
				"It reloads the old checkpoint and resumes from the last auto-commit: the delta it "+
					"already wrote is written again. Then a pause to measure.",
				"The drift turns positive: the verdict says overcount.",
				&Press{Action: action.Restart, Process: board.Usage},
				"naive-after"),
			resumedStep("Switch to guarded",
				"Guarded mode writes each effect under the identity of its message (topic/partition/"+
					"offset), moves the checkpoint only forward, and commits an offset only once its effect "+
					"is durable.",
				"mode guarded in the consumer-usage line.",
				&Press{Action: action.Mode, Process: board.Usage, Value: "guarded"},
				"guarded-before"),
			{
				Title: "Same crash, guarded",
				Say:   "Publishing again; the same crash point, in guarded mode.",
				Watch: "\"crash point after-delta reached\" on the watch line, crashed (SIGKILL) in its row.",
				Event: "crash point after-delta reached",
				Do:    "resume producer",
				Press: &Press{Action: action.CrashAt, Process: board.Usage},
				Mark:  "guarded-crashed",
			},
			resumedStep("Restart (guarded)",
				"The message is read again, its usage record already exists (a no-op) and the "+
					"checkpoint moves on: the window is closed. Then a pause to measure.",
				"The drift does not move.",
				&Press{Action: action.Restart, Process: board.Usage},
				"guarded-after"),
			{
				Title: "Publishing again",
				Say:   "Two writes without a transaction need idempotent effects, or the window stays open.",
				Do:    "resume producer",
			},
		},
		Checks: []Check{
			hitWindow("before", "crashed", "naive"),
			overCounted("naive: the same delta was counted twice (over-counted)", "before", "naive-after"),
			hitWindow("guarded-before", "guarded-crashed", "guarded"),
			driftUnchanged("guarded: the same crash adds no drift", "guarded-before", "guarded-after"),
		},
		Cleanup: "resume producer",
	},
	{
		Name:       "earliest-vs-latest",
		Title:      "The rule: earliest only when reprocessing is idempotent",
		Summary:    "replay consumer-usage from earliest: guarded stays exact, naive over-counts",
		UsageMode:  "guarded",
		UsageReset: "latest",
		Baseline:   true,
		// The naive replay writes a record a message: the embedded store takes
		// one or two thousand a second.
		MaxReplay: 200_000,
		Article: "earliest works when processing the same message twice gives the same result; latest is " +
			"needed when reprocessing duplicates the effect. It is not a configuration preference but a " +
			"consequence of what the consumer's operations mean: ask what happens if the same message is " +
			"processed twice.",
		Steps: []Step{
			{
				Title: "Guarded, latest",
				Say: "consumer-usage runs guarded: each effect is applied at most once, in order. The " +
					"producer stays paused through this lesson so every number compares exactly.",
				Watch: "The drift of the total row.",
				Until: stackReady, Stable: time.Second,
				Then: measure,
				Mark: "before",
			},
			replayStep("Guarded + earliest",
				"Reset earliest with a fresh group: the whole topic is read again from the first "+
					"message. Every effect is already in the store, so reprocessing changes nothing.",
				"reset earliest and a new group in the consumer-usage line; the drift stays put.",
				&Press{Action: action.Reset, Process: board.Usage, Value: "earliest"},
				"guarded-earliest"),
			replayStep("Naive + earliest",
				"The article's code with earliest: every delta since the beginning of the topic is "+
					"inserted a second time.",
				"rec climbs past exp: overcount on every sensor.",
				&Press{Action: action.Mode, Process: board.Usage, Value: "naive"},
				"naive-earliest"),
			{
				Title: "The rule",
				Say: "Idempotent processing may replay (earliest); additive processing must not (latest), " +
					"unless it is made idempotent. The duplicated usage stays in the store: e goes back to latest.",
				Watch: "The overcount remains: effects cannot be taken back.",
				Do:    "resume producer",
			},
		},
		Checks: []Check{
			replayedFromBeginning("before", "guarded-earliest"),
			driftUnchanged("guarded + earliest is exact: drift unchanged", "before", "guarded-earliest"),
			replayedFromBeginning("guarded-earliest", "naive-earliest"),
			overCounted("naive + earliest over-counts", "guarded-earliest", "naive-earliest"),
		},
		Cleanup: "resume producer",
	},
	{
		Name:    "stateless",
		Title:   "Strategy 3: nothing to recover",
		Summary: "crash consumer-query, the usage panel goes dark, restart, it answers at once",
		Article: "consumer-query does not consume from Kafka: it only queries MongoDB with an aggregation " +
			"pipeline. If it crashes it restarts and answers again: no state to rebuild, no offsets to " +
			"manage; its only dependency is MongoDB. It is a separate service so query load does not " +
			"interfere with ingestion.",
		Steps: []Step{
			{
				Title: "Usage totals live",
				Say:   "consumer-query answers the usage totals from the store; it has no Kafka lag.",
				Watch: "The usage panel is LIVE.",
				Until: stackReady, Stable: time.Second,
				Mark: "before",
			},
			{
				Title: "Crash consumer-query",
				Say:   "A SIGKILL. consumer-usage keeps consuming and writing: only the read side is gone.",
				Watch: "The usage panel says DOWN and shows no numbers; consumer-usage's lag stays low.",
				Press: &Press{Action: action.Crash, Process: board.Query},
				Until: queryDown,
				Mark:  "down",
			},
			{
				Title: "Down for a while",
				Say:   "Nothing accumulates on the query side while it is down: there is nothing to catch up.",
				Watch: "consumer-usage keeps running and its lag stays low: it goes on writing to the store, out of sight until consumer-query answers.",
				Hold:  3 * time.Second,
			},
			{
				Title: "Restart consumer-query",
				Say:   "It starts, connects to the store and answers.",
				Watch: "The usage panel is LIVE again within a poll, totals continuing from the store.",
				Press: &Press{Action: action.Restart, Process: board.Query},
				Until: queryAnswers,
				Mark:  "back",
			},
		},
		Checks: []Check{
			usageWentDark("down"),
			answersAtOnce("before", "back"),
		},
	},
	rebalanceInFlight,
	grade,
	leaderElection,
	minInsync,
	keyOrdering,
	acksLoss,
	acksZero,
	partitionsAdded,
	offsetsExpire,
	retention,
}

// resumedStep is the step that presses press, waits until consumer-usage
// runs again and measures mark.
func resumedStep(title, say, watch string, press *Press, mark string) Step {
	return Step{
		Title: title,
		Say:   say,
		Watch: watch,
		Press: press,
		Until: usageResumed, Stable: 500 * time.Millisecond,
		Then: measure,
		Mark: mark,
	}
}

// replayStep is resumedStep where consumer-usage reads the whole topic
// again.
func replayStep(title, say, watch string, press *Press, mark string) Step {
	s := resumedStep(title, say, watch, press, mark)
	// A replay of the whole topic: long after a long session.
	s.Timeout = replayTimeout
	return s
}
