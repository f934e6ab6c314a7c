package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// WriteJSON writes r as one line of JSON.
func WriteJSON(w io.Writer, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// ReadJSON reads results written by WriteJSON, one per line; a missing file is no results.
func ReadJSON(path string) ([]Result, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var results []Result
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		results = append(results, r)
	}
	return results, scanner.Err()
}

// WriteMarkdown writes results as a Markdown table. Rows of previous with the same label and
// scenario add the earlier throughput and the change, so a run reads side by side with the
// one before.
func WriteMarkdown(w io.Writer, results, previous []Result) error {
	earlier := map[string]Result{}
	for _, r := range previous {
		earlier[r.Label+"\x00"+r.Scenario] = r
	}
	var b strings.Builder
	b.WriteString("| store | scenario | clients | N | requests | errors | req/s | previous req/s | p50 ms | p90 ms | p99 ms | max ms | MB/s | server CPU % | server RSS MiB |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range results {
		prev := "–"
		if p, ok := earlier[r.Label+"\x00"+r.Scenario]; ok && p.RPS > 0 {
			prev = fmt.Sprintf("%.0f (%+.0f%%)", p.RPS, 100*(r.RPS-p.RPS)/p.RPS)
		}
		errs := fmt.Sprint(r.Errors)
		if r.Errors > 0 {
			errs = fmt.Sprintf("**%d** %s", r.Errors, errorKinds(r.ErrorKinds))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %.0f | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %s | %s |\n",
			orDash(r.Label), r.Scenario, r.Concurrency, r.N, r.Requests, errs, r.RPS, prev,
			r.P50ms, r.P90ms, r.P99ms, r.Maxms, r.MBps, optional(r.ServerCPU, "%.0f"), optional(r.ServerRSSMiB, "%.0f"))
	}
	writeEventsTable(&b, results)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEventsTable adds the deliveries of the events scenario, below its baseline: the
// write latency with subscribers reads against the one without, of the same label.
func writeEventsTable(b *strings.Builder, results []Result) {
	if !slices.ContainsFunc(results, func(r Result) bool { return r.Subscribers > 0 }) {
		return
	}
	b.WriteString("\n| store | scenario | subscribers | writes | write p50 ms | write p99 ms | deliveries | missed | delivery p50 ms | delivery p99 ms | delivery max ms |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	baselines := map[string]Result{}
	for _, r := range results {
		switch {
		case r.Scenario == eventsBaseline:
			baselines[r.Label] = r
			fmt.Fprintf(b, "| %s | %s | 0 | %d | %.2f | %.2f | – | – | – | – | – |\n", orDash(r.Label), r.Scenario, r.Requests, r.P50ms, r.P99ms)
		case r.Subscribers > 0:
			base, ok := baselines[r.Label]
			missed := fmt.Sprint(r.Missed)
			if r.Missed > 0 {
				missed = "**" + missed + "**"
			}
			fmt.Fprintf(b, "| %s | %s | %d | %d | %.2f%s | %.2f%s | %d | %s | %.2f | %.2f | %.2f |\n",
				orDash(r.Label), r.Scenario, r.Subscribers, r.Requests, r.P50ms, change(r.P50ms, base.P50ms, ok), r.P99ms, change(r.P99ms, base.P99ms, ok),
				r.Deliveries, missed, r.DeliveryP50ms, r.DeliveryP99ms, r.DeliveryMaxms)
		}
	}
}

// change is the relative difference of v from base, when there is a base to compare with.
func change(v, base float64, ok bool) string {
	if !ok || base <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%+.0f%%)", 100*(v-base)/base)
}

func errorKinds(kinds map[string]int) string {
	parts := make([]string, 0, len(kinds))
	for kind, n := range kinds {
		parts = append(parts, fmt.Sprintf("%s ×%d", kind, n))
	}
	slices.Sort(parts)
	return "(" + strings.Join(parts, ", ") + ")"
}

func optional(v float64, format string) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
