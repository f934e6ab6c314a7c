package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/lmosdir/lmosdir/client"
)

const moreResults = "more results: add --all"

// runSearch is `lmosdir search`: query a running directory from a shell, with its own search
// (words and filters) or with JSONPath, and print what it finds for people or, with --json,
// for scripts.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		baseURL  string
		q        client.SearchQuery
		all      bool
		asJSON   bool
		jsonPath string
		timeout  time.Duration
	)
	fs := flag.NewFlagSet("lmosdir search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: lmosdir search [flags] [words…]\n\nSearches the TDs of a running directory for all the words; flags filter.\nEvery flag can also be set as LMOSDIR_<FLAG> (--url as LMOSDIR_URL).\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&baseURL, "url", "http://localhost:8080", "base URL of the directory")
	fs.StringVar(&q.Kind, "kind", "", "only Things of this kind: agent, tool, directory, link or thing")
	fs.StringVar(&q.Type, "type", "", "only Things with this @type, as written (lmos:Tool) or expanded to an IRI")
	fs.StringVar(&q.Vendor, "vendor", "", "only Things of this vendor, by name (any case) or URL")
	fs.StringVar(&q.Action, "action", "", "only Things with an action of this name")
	fs.StringVar(&q.Property, "property", "", "only Things with a property of this name")
	fs.StringVar(&q.Event, "event", "", "only Things with an event of this name")
	fs.StringVar(&q.Capability, "capability", "", "only Things with this LMOS capability id (or id@version)")
	fs.StringVar(&q.Protocol, "protocol", "", "only Things with a form of this URI scheme or subprotocol (https, wss, sse, …)")
	fs.IntVar(&q.Limit, "limit", 20, "results per page, 1 to 100")
	fs.BoolVar(&all, "all", false, "fetch every page of results, not only the first")
	fs.BoolVar(&asJSON, "json", false, "print the items as a JSON array, with their TDs")
	fs.StringVar(&jsonPath, "jsonpath", "", "run this RFC 9535 JSONPath query over all TDs instead of a search and print its nodes")
	fs.DurationVar(&timeout, "timeout", 10*time.Second, "longest wait for each answer of the directory (0: no limit)")
	words, err := parseWithWords(fs, args)
	if err != nil {
		return err
	}
	if timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	q.Text = strings.Join(words, " ")
	dir, err := client.New(baseURL, client.WithHTTPClient(&http.Client{Timeout: timeout}))
	if err != nil {
		return err
	}

	if jsonPath != "" {
		if q != (client.SearchQuery{Limit: q.Limit}) || all {
			return errors.New("--jsonpath runs instead of a search: leave out the words, the search filters and --all")
		}
		nodes, err := dir.JSONPath(ctx, jsonPath)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, nodes, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err = stdout.Write(out.Bytes())
		return err
	}

	page, err := dir.Search(ctx, q)
	if err != nil {
		return err
	}
	if all && page.Next != "" {
		q.Cursor = page.Next
		for item, err := range dir.SearchAll(ctx, q) {
			if err != nil {
				return err
			}
			page.Items = append(page.Items, item)
		}
		page.Next = ""
	}
	if !asJSON {
		return writeSearchTable(stdout, page)
	}
	if page.Items == nil {
		page.Items = []client.SearchItem{} // [] rather than null for scripts
	}
	out, err := json.MarshalIndent(page.Items, "", "  ")
	if err != nil {
		return err
	}
	if _, err := stdout.Write(append(out, '\n')); err != nil {
		return err
	}
	// Standard output stays one JSON document.
	if page.Next != "" {
		fmt.Fprintln(stderr, moreResults)
	}
	return nil
}

// parseWithWords parses flags given before, between and after the words, as people type
// them ("lmosdir search invoice --kind tool"); the flag package alone stops at the first
// word. After "--" everything is a word. Flags not given are then set from their
// LMOSDIR_* variables.
func parseWithWords(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return words, applyEnvironment(fs)
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(words, rest...), applyEnvironment(fs)
		}
		words = append(words, rest[0])
		args = rest[1:]
	}
}

// writeSearchTable prints the items as a table for people, then the facets of the whole
// result, then a hint when there are more pages.
func writeSearchTable(w io.Writer, page client.SearchPage) error {
	var table bytes.Buffer
	if len(page.Items) == 0 {
		table.WriteString("no Things match\n")
	} else {
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tID\tTITLE\tVENDOR\tSCORE")
		for _, item := range page.Items {
			var score string
			if item.Score != 0 {
				score = strconv.FormatFloat(item.Score, 'f', 3, 64)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(item.Kind), cell(item.ID), cell(item.Title), cell(vendorName(item.Vendor)), score)
		}
		tw.Flush()
	}

	var out strings.Builder
	// tabwriter pads every cell of a column, also the last one shown when the score is blank.
	for line := range strings.Lines(table.String()) {
		out.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	var facetLines []string
	for _, facet := range []struct {
		name   string
		counts []client.FacetCount
	}{{"kind", page.Facets.Kind}, {"vendor", page.Facets.Vendor}, {"type", page.Facets.Type}} {
		if len(facet.counts) == 0 {
			continue
		}
		counts := make([]string, len(facet.counts))
		for i, fc := range facet.counts {
			counts[i] = cell(fc.Value) + " " + strconv.Itoa(fc.Count)
		}
		facetLines = append(facetLines, facet.name+": "+strings.Join(counts, ", ")+"\n")
	}
	if len(facetLines) > 0 {
		out.WriteString("\n" + strings.Join(facetLines, ""))
	}
	if page.Next != "" {
		out.WriteString("\n" + moreResults + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func vendorName(v *client.Vendor) string {
	switch {
	case v == nil:
		return ""
	case v.Name != "":
		return v.Name
	default:
		return v.URL
	}
}

// cell makes text from a registered TD fit one table cell: line breaks and tabs would break
// the table, and control characters (terminal escapes) must not reach the terminal.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case !unicode.IsPrint(r):
			return -1
		default:
			return r
		}
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
