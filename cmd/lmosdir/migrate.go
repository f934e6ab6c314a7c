package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

// migrate runs `lmosdir migrate up|down N|version|force V` on the configured store.
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("migrate needs a subcommand: up, down N, version or force V\n%s", usage)
	}
	sub, rest := args[0], args[1:]
	var number int
	if sub == "down" || sub == "force" {
		if len(rest) == 0 {
			return fmt.Errorf("migrate %s needs a number", sub)
		}
		n, err := strconv.Atoi(rest[0])
		if err != nil || n < 0 || (sub == "down" && n == 0) {
			return fmt.Errorf("migrate %s: %q is not a valid number", sub, rest[0])
		}
		number, rest = n, rest[1:]
	}
	cfg, err := parseConfig("migrate "+sub, rest, stderr)
	if err != nil {
		return err
	}
	b, err := chooseBackend(cfg)
	if err != nil {
		return err
	}
	m := b.migrations()
	switch sub {
	case "up":
		return m.up(ctx, b.location)
	case "down":
		return m.down(ctx, b.location, number)
	case "force":
		return m.force(ctx, b.location, number)
	case "version":
		v, dirty, err := m.version(ctx, b.location)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "version %d dirty %t\n", v, dirty)
		return err
	default:
		return fmt.Errorf("unknown migrate subcommand %q: use up, down N, version or force V", sub)
	}
}
