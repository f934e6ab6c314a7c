package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lmosdir/lmosdir/discovery"
)

// discovered is one instance lmosdir discover prints.
type discovered struct {
	Name string            `json:"name"`
	Kind string            `json:"kind"` // "directory" or "thing"
	TD   string            `json:"td,omitempty"`
	Host string            `json:"host"`
	Port int               `json:"port"`
	TXT  map[string]string `json:"txt"`
	// Problem says why no TD URL could be made of the records.
	Problem string `json:"problem,omitempty"`
}

// runDiscover is `lmosdir discover`: browse the LAN for WoT directories and Things and
// list them with the URLs of their TDs.
func runDiscover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		wait       time.Duration
		asJSON     bool
		interfaces string
	)
	fs := flag.NewFlagSet("lmosdir discover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: lmosdir discover [flags]\n\nBrowses the LAN over mDNS for WoT directories and Things (_wot._tcp) and lists them.\nEvery flag can also be set as LMOSDIR_<FLAG>.\n\n")
		fs.PrintDefaults()
	}
	fs.DurationVar(&wait, "wait", 3*time.Second, "how long to listen for answers")
	fs.BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	fs.StringVar(&interfaces, "interfaces", "", "comma-separated interfaces to browse on (default: every interface that can multicast)")
	operands, err := parseWithWords(fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(operands, " "))
	}
	if wait <= 0 {
		return errors.New("wait must be positive")
	}
	ifaces, err := (&discoveryConfig{MDNSInterfaces: interfaces}).interfaces()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	found := map[string]discovered{}
	err = discovery.Browse(ctx, ifaces, func(i discovery.Instance) {
		d := discovered{Name: i.Name, Kind: "thing", Host: strings.TrimSuffix(i.Host, "."), Port: i.Port, TXT: i.TXT}
		if i.IsDirectory() {
			d.Kind = "directory"
		}
		if url, err := i.TDURL(); err == nil {
			d.TD = url
		} else {
			d.Problem = err.Error()
		}
		found[i.Name] = d
	})
	if err != nil {
		return err
	}
	list := make([]discovered, 0, len(found))
	for _, d := range found {
		list = append(list, d)
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].Kind != list[b].Kind {
			return list[a].Kind == "directory"
		}
		return list[a].Name < list[b].Name
	})
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	return writeDiscovered(stdout, list)
}

func writeDiscovered(w io.Writer, list []discovered) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "nothing answered on the LAN")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tTD")
	for _, d := range list {
		td := d.TD
		if td == "" {
			td = "(" + d.Problem + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Kind, d.Name, td)
	}
	return tw.Flush()
}
