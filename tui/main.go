// Command tui builds krl, Kafka Recovery Lab: with no subcommand it opens the
// dashboard; with one it runs one of the roles the dashboard supervises, so
// every role is a real child process of the same binary.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kafka-recovery-lab/krl/consumers/current"
	"github.com/kafka-recovery-lab/krl/consumers/query"
	"github.com/kafka-recovery-lab/krl/consumers/usage"
	"github.com/kafka-recovery-lab/krl/internal/cli"
	"github.com/kafka-recovery-lab/krl/internal/procs"
	"github.com/kafka-recovery-lab/krl/internal/role"
	"github.com/kafka-recovery-lab/krl/internal/version"
	"github.com/kafka-recovery-lab/krl/producer"
)

const usageText = `Kafka Recovery Lab

usage:
  krl [flags]                     the dashboard (krl -h for its keys and flags)
  krl broker   [flags]            embedded Kafka-protocol broker (kfake)
  krl store    [flags]            embedded MongoDB-wire store (FerretDB, SQLite)
  krl kafka-node [flags]          one Apache Kafka node of --cluster N (a JVM)
  krl producer [flags]            telemetry simulator
  krl consumer current [flags]    consumer-current: replay from earliest, state in memory
  krl consumer usage [flags]      consumer-usage: checkpoint in the store + latest
  krl consumer query [flags]      consumer-query: stateless usage totals over HTTP
  krl serve [flags]               the workshop over SSH: a lab per attendee (krl serve -h)
  krl version                     the version, the commit, Go and librdkafka (also krl --version)
`

func main() {
	args := os.Args[1:]
	// Every role is mostly idle at the lab's rates: one thread while it is.
	procs.Govern()
	os.Exit(profiled(args, func() int { return dispatch(args, os.Stderr) }))
}

// commands are the subcommands: the roles the dashboard supervises (their
// Command in package role) and the workshop.
var commands = map[string]func(args []string, stderr io.Writer) int{
	"broker":     func(args []string, _ io.Writer) int { return brokerMain(args) },
	"store":      func(args []string, _ io.Writer) int { return storeMain(args) },
	"kafka-node": func(args []string, _ io.Writer) int { return kafkaNodeMain(args) },
	"producer":   func(args []string, _ io.Writer) int { return producer.Main(args) },
	"serve":      func(args []string, _ io.Writer) int { return serveMain(args) },
	"consumer":   consumerMain,
	"version": func([]string, io.Writer) int {
		fmt.Fprint(os.Stdout, version.Read())
		return cli.ExitOK
	},
	"help": func([]string, io.Writer) int {
		fmt.Fprint(os.Stdout, usageText)
		return cli.ExitOK
	},
}

// consumers are the consumer roles, by the second word of their Command.
var consumers = map[string]func(args []string) int{
	"current": current.Main,
	"usage":   usage.Main,
	"query":   query.Main,
}

func dispatch(args []string, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args[0] = "version"
	}
	if len(args) == 0 || (len(args[0]) > 0 && args[0][0] == '-') {
		return runDashboard(args)
	}
	if run := commands[args[0]]; run != nil {
		return run(args[1:], stderr)
	}
	fmt.Fprintf(stderr, "error: unknown command %q\n\n%s", args[0], usageText)
	return cli.ExitUsage
}

// consumerMain runs "consumer NAME".
func consumerMain(args []string, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprint(stderr, "error: consumer needs a name: "+consumerNames()+"\n\n", usageText)
		return cli.ExitUsage
	}
	if run := consumers[args[0]]; run != nil {
		return run(args[1:])
	}
	fmt.Fprintf(stderr, "error: unknown consumer %q (want %s)\n", args[0], consumerNames())
	return cli.ExitUsage
}

// consumerNames are the consumer roles' names in display order: "current,
// usage or query".
func consumerNames() string {
	var names []string
	for _, r := range role.All {
		if len(r.Command) == 2 && r.Command[0] == "consumer" {
			names = append(names, r.Command[1])
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
