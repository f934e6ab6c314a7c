package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lmosdir/lmosdir/client"
	"github.com/lmosdir/lmosdir/lmos"
)

// maxMessageFile bounds what send reads of a message, so that a wrong file or an endless
// pipe fails instead of filling memory; the gateway takes far smaller messages.
const maxMessageFile = 16 << 20

// errNoReply is the cause of giving up on a reply after --timeout.
var errNoReply = errors.New("no reply in time")

// runSend is `lmosdir send`: send one LMOS message to a Thing through the directory's
// gateway from a shell, to try an agent or tool, and print the replies for scripts.
func runSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		baseURL string
		opts    client.GatewayOptions
		stream  bool
		timeout time.Duration
	)
	fs := flag.NewFlagSet("lmosdir send", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: lmosdir send [flags] <thing-id> <message.json | ->\n\n"+
			"Sends one LMOS message, read from the file or standard input (-), to the Thing through the\n"+
			"directory's gateway, and prints each reply as a line of JSON. A missing thing id is set to\n"+
			"<thing-id> and a missing message id to a new UUID. Exits with an error when the last reply\n"+
			"is an LMOS error. Every flag can also be set as LMOSDIR_<FLAG> (--url as LMOSDIR_URL).\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&baseURL, "url", "http://localhost:8080", "base URL of the directory")
	fs.StringVar(&opts.Consumer, "consumer", "", "your own identity for the gateway, e.g. your Thing's id")
	fs.StringVar(&opts.Session, "session", "", "session id for the gateway's AOS guardian")
	fs.BoolVar(&stream, "stream", false, "ask for a stream of replies: every status of an invokeAction as it comes (subscriptions and observations always stream)")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "longest wait for the reply, or for the first reply of a stream (0: no limit)")
	operands, err := parseWithWords(fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 2 {
		return errors.New("give the thing id and the message file, or - for standard input; lmosdir send -h")
	}
	if timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	thingID, source := operands[0], operands[1]

	data, err := readMessage(source)
	if err != nil {
		return err
	}
	if data, err = completeMessage(data, thingID); err != nil {
		return err
	}
	m, err := lmos.Parse(data)
	var invalid *lmos.ValidationError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems {
			fmt.Fprintf(stderr, "%s: %s\n", cmp.Or(p.Member, "message"), p.Description)
		}
		return errors.New("the message is not a valid LMOS message; nothing was sent")
	}
	dir, err := client.New(baseURL)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { cancel(errNoReply) })
	}
	var last *lmos.Message
	for reply, err := range dir.SendMessage(ctx, thingID, m, opts, stream) {
		if err != nil {
			return err
		}
		if timer != nil {
			timer.Stop()
		}
		line, err := reply.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := stdout.Write(append(line, '\n')); err != nil {
			return err
		}
		last = reply
	}
	if last == nil {
		if errors.Is(context.Cause(ctx), errNoReply) {
			return fmt.Errorf("no reply within %s", timeout)
		}
		return cmp.Or(ctx.Err(), errors.New("the gateway sent no reply"))
	}
	if e, ok := last.Body.(*lmos.Error); ok {
		return fmt.Errorf("the reply is an LMOS error: %s %s: %s", e.Status, e.Title, e.Detail)
	}
	return nil
}

func readMessage(source string) ([]byte, error) {
	r := io.Reader(os.Stdin)
	if source != "-" {
		f, err := os.Open(source)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxMessageFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxMessageFile {
		return nil, fmt.Errorf("%s: larger than %d MiB, too large for a message", source, maxMessageFile>>20)
	}
	return data, nil
}

// completeMessage sets the thing id of a message that has none to thingID and gives a message
// without a message id a new one, in the spelling of the message's first id member
// (thingID or thingId, …). It refuses a message for another Thing. Data that is no JSON
// object is returned as it is, for lmos.Parse to explain what is wrong.
func completeMessage(data []byte, thingID string) ([]byte, error) {
	members, ok := lmos.ObjectMembers(data)
	if !ok {
		return data, nil
	}
	camel, spelled := false, false
	thingAt, hasMessageID := -1, false
	for i, m := range members {
		switch m.Name {
		case "thingID", "thingId":
			thingAt = i
			var id string
			if json.Unmarshal(m.Value, &id) == nil && id != thingID {
				return nil, fmt.Errorf("the message is for %s, not %s", id, thingID)
			}
		case "messageID", "messageId":
			hasMessageID = true
		case "correlationID", "correlationId":
		default:
			continue
		}
		if !spelled {
			camel, spelled = strings.HasSuffix(m.Name, "Id"), true
		}
	}
	if thingAt >= 0 && hasMessageID {
		return data, nil
	}
	idName := func(upper string) string {
		if camel {
			return strings.TrimSuffix(upper, "ID") + "Id"
		}
		return upper
	}
	if thingAt < 0 {
		members = slices.Insert(members, 0, lmos.Member{Name: idName("thingID"), Value: quote(thingID)})
		thingAt = 0
	}
	if !hasMessageID {
		members = slices.Insert(members, thingAt+1, lmos.Member{Name: idName("messageID"), Value: quote(uuid.NewString())})
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(quote(m.Name))
		out.WriteByte(':')
		out.Write(m.Value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func quote(s string) json.RawMessage {
	data, _ := json.Marshal(s) // a string always encodes
	return data
}
