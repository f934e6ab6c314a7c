// Package target turns a stored Thing Description into what the LMOS gateway needs to
// relay messages to the Thing: its affordances, their data schemas and the endpoints of
// its forms. It also decides whether a consumer's message may be forwarded, so that a
// Thing only receives messages its TD says it understands.
package target

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/lmosdir/lmosdir/lmos"
	"github.com/lmosdir/lmosdir/td"
)

// Thing is what the gateway needs of a Thing Description.
type Thing struct {
	ID, Title, Description string
	Version                string // version.instance, "" when absent
	Kind                   string // td.Index Kind ("agent", "tool", ...)
	Vendor                 td.Vendor
	Forms                  []Form // the Thing-level forms
	Properties             map[string]*Property
	Actions                map[string]*Action
	Events                 map[string]*Event
	// The affordance names in document order.
	PropertyNames, ActionNames, EventNames []string
}

// Form is one form of a TD with its href resolved and the TD 1.1 defaults filled in.
type Form struct {
	Href        *url.URL // absolute
	Ops         []string
	Subprotocol string
	ContentType string
	Method      string // htv:methodName, "" when absent
}

// Has reports whether the form is for the operation op ("readproperty", "invokeaction", ...).
func (f Form) Has(op string) bool {
	return slices.Contains(f.Ops, op)
}

// Property is a property affordance.
type Property struct {
	Name, Title, Description        string
	ReadOnly, WriteOnly, Observable bool
	Schema                          *Schema // the affordance without its interaction terms
	Forms                           []Form
}

// Action is an action affordance.
type Action struct {
	Name, Title, Description string
	Safe, Idempotent         bool
	Input, Output            *Schema // nil when absent
	Forms                    []Form
}

// Event is an event affordance.
type Event struct {
	Name, Title, Description string
	Data                     *Schema // nil when absent
	Forms                    []Form
}

const defaultContentType = "application/json"

// Parse reads a TD as the directory stores it (JSON bytes of the TD, possibly with a
// "registration" member) into what the gateway needs. It fails only when the bytes are not
// a JSON object or have no string "id": what else is missing or malformed is left out, as
// the directory validated the TD when it was registered. Parse compiles no schema.
func Parse(document []byte) (*Thing, error) {
	decoded, err := td.DecodeJSON(document)
	if err != nil {
		return nil, fmt.Errorf("target: the Thing Description is not JSON: %w", err)
	}
	doc, ok := decoded.(map[string]any)
	if !ok {
		return nil, errors.New("target: the Thing Description is not a JSON object")
	}
	id, ok := doc["id"].(string)
	if !ok {
		return nil, errors.New(`target: the Thing Description has no string "id"`)
	}
	index := td.ExtractIndexFrom(document, doc)
	t := &Thing{
		ID:          id,
		Title:       stringOf(doc, "title"),
		Description: stringOf(doc, "description"),
		Kind:        index.Kind,
		Vendor:      index.Vendor,
	}
	if version, ok := doc["version"].(map[string]any); ok {
		t.Version = stringOf(version, "instance")
	}
	base := parseBase(doc["base"])
	t.Forms = parseForms(doc["forms"], base, nil)

	// The decoded document has no member order and only decoded schemas; the raw members
	// give both the order of the affordances and their schemas as written.
	var rawProperties, rawActions, rawEvents []byte
	top, _ := objectMembers(document)
	for _, m := range top {
		// A repeated member replaces the earlier one, as it does in the decoded document.
		switch m.name {
		case "properties":
			rawProperties = m.value
		case "actions":
			rawActions = m.value
		case "events":
			rawEvents = m.value
		}
	}
	t.PropertyNames, t.Properties = affordances(rawProperties, doc["properties"], func(name string, a map[string]any, raw []byte) *Property {
		return parseProperty(name, a, raw, base)
	})
	t.ActionNames, t.Actions = affordances(rawActions, doc["actions"], func(name string, a map[string]any, raw []byte) *Action {
		return parseAction(name, a, raw, base)
	})
	t.EventNames, t.Events = affordances(rawEvents, doc["events"], func(name string, a map[string]any, raw []byte) *Event {
		return parseEvent(name, a, raw, base)
	})
	return t, nil
}

// affordances reads one affordance map from its bytes, which give the order of the names
// and the schemas as written, and from its decoded value. Members whose value is not an
// object describe nothing usable and are left out.
func affordances[T any](raw []byte, decoded any, parse func(name string, a map[string]any, raw []byte) *T) ([]string, map[string]*T) {
	byName, _ := decoded.(map[string]any)
	members, _ := objectMembers(raw)
	names := make([]string, 0, len(members))
	parsed := make(map[string]*T, len(members))
	for _, m := range members {
		a, ok := byName[m.name].(map[string]any)
		if !ok {
			continue
		}
		if _, seen := parsed[m.name]; !seen {
			names = append(names, m.name)
		}
		// A repeated name keeps its first place but, like the decoded map, its last value.
		parsed[m.name] = parse(m.name, a, m.value)
	}
	return names, parsed
}

// interactionTerms are the members of a property affordance that describe how to interact
// with it rather than its value; they are not part of its data schema.
var interactionTerms = []string{"forms", "uriVariables", "observable"}

func isInteractionTerm(name string) bool {
	return slices.Contains(interactionTerms, name)
}

func parseProperty(name string, a map[string]any, raw []byte, base *url.URL) *Property {
	p := &Property{
		Name:        name,
		Title:       stringOf(a, "title"),
		Description: stringOf(a, "description"),
		ReadOnly:    boolOf(a, "readOnly"),
		WriteOnly:   boolOf(a, "writeOnly"),
		Observable:  boolOf(a, "observable"),
	}
	members, _ := objectMembers(raw)
	p.Schema = newSchema(withoutMembers(raw, members, isInteractionTerm))
	var ops []string
	if !p.WriteOnly {
		ops = append(ops, "readproperty")
	}
	if !p.ReadOnly {
		ops = append(ops, "writeproperty")
	}
	// Both flags set leave no default operation; forms of such a property must name theirs.
	p.Forms = parseForms(a["forms"], base, ops)
	return p
}

func parseAction(name string, a map[string]any, raw []byte, base *url.URL) *Action {
	act := &Action{
		Name:        name,
		Title:       stringOf(a, "title"),
		Description: stringOf(a, "description"),
		Safe:        boolOf(a, "safe"),
		Idempotent:  boolOf(a, "idempotent"),
		Forms:       parseForms(a["forms"], base, []string{"invokeaction"}),
	}
	members, _ := objectMembers(raw)
	for _, m := range members {
		switch m.name {
		case "input":
			act.Input = newSchema(m.value)
		case "output":
			act.Output = newSchema(m.value)
		}
	}
	return act
}

func parseEvent(name string, a map[string]any, raw []byte, base *url.URL) *Event {
	e := &Event{
		Name:        name,
		Title:       stringOf(a, "title"),
		Description: stringOf(a, "description"),
		Forms:       parseForms(a["forms"], base, []string{"subscribeevent", "unsubscribeevent"}),
	}
	members, _ := objectMembers(raw)
	for _, m := range members {
		if m.name == "data" {
			e.Data = newSchema(m.value)
		}
	}
	return e
}

// parseBase returns the TD's base URI, or nil when there is none that parses.
func parseBase(v any) *url.URL {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil
	}
	return u
}

// parseForms reads a forms array. defaultOps are the operations of a form without "op".
func parseForms(v any, base *url.URL, defaultOps []string) []Form {
	list, _ := v.([]any)
	forms := make([]Form, 0, len(list))
	for _, e := range list {
		f, ok := e.(map[string]any)
		if !ok {
			continue
		}
		href, ok := resolveHref(f["href"], base)
		if !ok {
			continue
		}
		form := Form{
			Href:        href,
			Subprotocol: stringOf(f, "subprotocol"),
			ContentType: stringOf(f, "contentType"),
			Method:      stringOf(f, "htv:methodName"),
		}
		if form.ContentType == "" {
			form.ContentType = defaultContentType
		}
		switch op := f["op"].(type) {
		case nil:
			// Each form gets its own slice, so a caller changing one changes no other.
			form.Ops = slices.Clone(defaultOps)
		case string:
			form.Ops = []string{op}
		case []any:
			for _, o := range op {
				if s, ok := o.(string); ok {
					form.Ops = append(form.Ops, s)
				}
			}
		}
		forms = append(forms, form)
	}
	if len(forms) == 0 {
		return nil
	}
	return forms
}

// resolveHref resolves an href against the TD's base (RFC 3986, section 5). Only an
// absolute result can be connected to.
func resolveHref(v any, base *url.URL) (*url.URL, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u, u.IsAbs()
}

// LMOSEndpoint is where messages for an affordance with the given forms go over WebSocket:
// the first form of the affordance whose subprotocol is "lmosprotocol" and whose href
// scheme is ws or wss, else the first such Thing-level form.
func (t *Thing) LMOSEndpoint(affordanceForms []Form) (*url.URL, bool) {
	for _, forms := range [2][]Form{affordanceForms, t.Forms} {
		for _, f := range forms {
			if f.Href != nil && f.Subprotocol == lmos.Subprotocol && (f.Href.Scheme == "ws" || f.Href.Scheme == "wss") {
				return f.Href, true
			}
		}
	}
	return nil, false
}

// HTTPForm is the first form with an http or https href, no subprotocol, that has op.
func HTTPForm(forms []Form, op string) (Form, bool) {
	for _, f := range forms {
		if f.Href != nil && (f.Href.Scheme == "http" || f.Href.Scheme == "https") && f.Subprotocol == "" && f.Has(op) {
			return f, true
		}
	}
	return Form{}, false
}

func stringOf(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func boolOf(m map[string]any, key string) bool {
	b, _ := m[key].(bool)
	return b
}
