// Command tui is Kafka Recovery Lab: with no subcommand it opens the
// dashboard; with one it runs one of the roles the dashboard supervises, so
// every role is a real child process of the same binary.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kafka-recovery-lab/krl/consumers/current"
	"github.com/kafka-recovery-lab/krl/consumers/query"
	"github.com/kafka-recovery-lab/krl/consumers/usage"
	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/producer"
)

const usageText = `Kafka Recovery Lab

usage:
  tui [flags]                     the dashboard (tui -h for its keys and flags)
  tui broker   [flags]            embedded Kafka-protocol broker (kfake)
  tui store    [flags]            embedded MongoDB-wire store (FerretDB, SQLite)
  tui kafka-node [flags]          one Apache Kafka node of --cluster N (a JVM)
  tui producer [flags]            telemetry simulator
  tui consumer current [flags]    consumer-current: replay from earliest, state in memory
  tui consumer usage [flags]      consumer-usage: checkpoint in the store + latest
  tui consumer query [flags]      consumer-query: stateless usage totals over HTTP
  tui serve [flags]               the workshop over SSH: a lab per attendee (tui serve -h)
`

func main() {
	args := os.Args[1:]
	os.Exit(profiled(args, func() int { return dispatch(args, os.Stderr) }))
}

func dispatch(args []string, stderr io.Writer) int {
	if len(args) == 0 || (len(args[0]) > 0 && args[0][0] == '-') {
		return runDashboard(args)
	}
	switch args[0] {
	case "broker":
		return brokerMain(args[1:])
	case "store":
		return storeMain(args[1:])
	case "kafka-node":
		return kafkaNodeMain(args[1:])
	case "producer":
		return producer.Main(args[1:])
	case "serve":
		return serveMain(args[1:])
	case "consumer":
		if len(args) < 2 {
			fmt.Fprint(stderr, "error: consumer needs a name: current, usage or query\n\n", usageText)
			return cli.ExitUsage
		}
		switch args[1] {
		case "current":
			return current.Main(args[2:])
		case "usage":
			return usage.Main(args[2:])
		case "query":
			return query.Main(args[2:])
		}
		fmt.Fprintf(stderr, "error: unknown consumer %q (want current, usage or query)\n", args[1])
		return cli.ExitUsage
	case "help":
		fmt.Fprint(os.Stdout, usageText)
		return cli.ExitOK
	}
	fmt.Fprintf(stderr, "error: unknown command %q\n\n%s", args[0], usageText)
	return cli.ExitUsage
}
