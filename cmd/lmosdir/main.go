// Command lmosdir is the directory and discovery hub for AI agents and tools described as
// W3C WoT Thing Descriptions.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lmosdir:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	command := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		cfg, err := parseConfig("serve", args, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg)
	case "migrate":
		return migrate(ctx, args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	case "import":
		return runImport(ctx, args, stdout, stderr)
	case "search":
		return runSearch(ctx, args, stdout, stderr)
	case "send":
		return runSend(ctx, args, stdout, stderr)
	case "discover":
		return runDiscover(ctx, args, stdout, stderr)
	case "version":
		_, err := fmt.Fprintln(stdout, "lmosdir", version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q\n%s", command, usage)
	}
}

const usage = `usage: lmosdir [command] [flags]

commands:
  serve                 run the directory (default); lmosdir serve -h lists its flags
  migrate up            apply all pending database migrations
  migrate down N        roll back N migrations
  migrate version       print the schema version and whether it is dirty
  migrate force V       mark the schema as version V after repairing a failed migration
  import                register TDs from NDJSON on standard input (or --generate N) into the store
  bench                 load a running directory and report throughput and latency; lmosdir bench -h
  bench report          render saved bench results (--results, --previous) as Markdown
  search                query a running directory (/search or --jsonpath); lmosdir search -h
  discover              list the WoT directories and Things that announce themselves on the LAN (mDNS)
  send                  send an LMOS message to a Thing through the directory's gateway; lmosdir send -h
  version               print the version
`
