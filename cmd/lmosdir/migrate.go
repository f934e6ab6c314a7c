package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/lmosdir/lmosdir/directory/postgres"
)

// migrate runs `lmosdir migrate up|down N|version|force V` against --database-url.
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
	url := cfg.DatabaseURL
	switch sub {
	case "up":
		return postgres.MigrateUp(ctx, url)
	case "down":
		return postgres.MigrateDown(ctx, url, number)
	case "force":
		return postgres.MigrateForce(ctx, url, number)
	case "version":
		v, dirty, err := postgres.MigrateVersion(ctx, url)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "version %d dirty %t\n", v, dirty)
		return err
	default:
		return fmt.Errorf("unknown migrate subcommand %q: use up, down N, version or force V", sub)
	}
}
