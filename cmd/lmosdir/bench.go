package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/lmosdir/lmosdir/bench"
)

// runBench is `lmosdir bench`: load a running directory over HTTP and report, or
// `lmosdir bench report` to render saved results as Markdown.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "report" {
		return benchReport(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "echo-agent" {
		return benchEchoAgent(ctx, args[1:], stdout, stderr)
	}
	var (
		cfg       bench.Config
		scenarios string
		asJSON    bool
	)
	fs := flag.NewFlagSet("lmosdir bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Target, "target", "http://127.0.0.1:8080", "base URL of the directory to load")
	fs.StringVar(&scenarios, "scenario", strings.Join(bench.Standard, ","), "comma-separated scenarios: "+bench.ScenarioNames())
	fs.IntVar(&cfg.Concurrency, "concurrency", 32, "clients sending requests at once")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "time each scenario runs")
	fs.IntVar(&cfg.Requests, "requests", 0, "stop a scenario after this many requests (0: run for --duration)")
	fs.IntVar(&cfg.N, "n", 1000, "Things to preload and address")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of the generated Things")
	fs.BoolVar(&cfg.Preload, "preload", true, "register the N Things before the scenarios")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a target that is not on this machine's loopback")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "process of the directory for CPU and memory figures (default: the one listening on the target port)")
	fs.StringVar(&cfg.Label, "label", "", "name of this run in reports, e.g. the store")
	fs.IntVar(&cfg.Subscribers, "subscribers", 1000, "event streams the events scenario opens")
	fs.DurationVar(&cfg.WriteInterval, "write-interval", 50*time.Millisecond, "time between the writes of the events scenario (one writer)")
	fs.DurationVar(&cfg.GatewayPace, "gateway-pace", 2*time.Millisecond, "time between the requests of the gateway scenario's one-connection runs (0: back to back)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per scenario instead of a Markdown table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if exe, err := os.Executable(); err == nil {
		cfg.EchoAgent = []string{exe, "bench", "echo-agent"}
	}
	for _, s := range strings.Split(scenarios, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Scenarios = append(cfg.Scenarios, s)
		}
	}
	var results []bench.Result
	err := bench.Run(ctx, cfg, func(r bench.Result) error {
		if asJSON {
			return bench.WriteJSON(stdout, r)
		}
		results = append(results, r)
		return nil
	})
	if !asJSON && len(results) > 0 {
		err = errors.Join(err, bench.WriteMarkdown(stdout, results, nil))
	}
	return err
}

func benchReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lmosdir bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	resultsPath := fs.String("results", "", "JSON lines written by lmosdir bench --json")
	previousPath := fs.String("previous", "", "earlier results to compare with (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *resultsPath == "" {
		return errors.New("bench report needs --results")
	}
	results, err := bench.ReadJSON(*resultsPath)
	if err != nil {
		return err
	}
	var previous []bench.Result
	if *previousPath != "" {
		if previous, err = bench.ReadJSON(*previousPath); err != nil {
			return err
		}
	}
	return bench.WriteMarkdown(stdout, results, previous)
}

// benchEchoAgent is `lmosdir bench echo-agent`: the agent of the gateway scenario, which
// bench starts in a process of its own.
func benchEchoAgent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lmosdir bench echo-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve the echo agent's WebSocket on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	listener, err := new(net.ListenConfig).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	return bench.ServeEchoAgent(ctx, listener, stdout)
}
