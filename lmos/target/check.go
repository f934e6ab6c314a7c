package target

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/lmosdir/lmosdir/lmos"
)

// Refusal says why a message must not be forwarded. Status is the HTTP status code whose
// meaning fits; Title is that code's standard reason phrase (http.StatusText).
type Refusal struct {
	Status        int
	Title, Detail string
}

func refuse(status int, format string, args ...any) *Refusal {
	return &Refusal{Status: status, Title: http.StatusText(status), Detail: fmt.Sprintf(format, args...)}
}

// Check decides whether a consumer's message may be forwarded to the Thing: it names an
// affordance the TD has, in a way the TD allows, with a value its data schema accepts.
// It does not look at the message's ThingID, which the caller matched to the Thing already.
// A nil Refusal means the message may be forwarded.
func (t *Thing) Check(m *lmos.Message) *Refusal {
	if m == nil || m.Body == nil {
		return refuse(http.StatusBadRequest, "the message to Thing %q has no message type", t.ID)
	}
	switch b := m.Body.(type) {
	case *lmos.InvokeAction:
		a, r := t.action(b.Action)
		if r != nil || len(b.Input) == 0 {
			return r
		}
		return t.checkValue(a.Input, b.Input, "the input of action", b.Action)
	case *lmos.CancelAction:
		_, r := t.action(b.Action)
		return r
	case *lmos.QueryAction:
		_, r := t.action(b.Action)
		return r
	case *lmos.ReadProperty:
		p, r := t.property(b.Name)
		if r != nil {
			return r
		}
		if p.WriteOnly {
			return refuse(http.StatusMethodNotAllowed, "property %q of Thing %q is write-only: it cannot be read", b.Name, t.ID)
		}
	case *lmos.WriteProperty:
		p, r := t.writableProperty(b.Name)
		if r != nil {
			return r
		}
		return t.checkValue(p.Schema, b.Data, "the value of property", b.Name)
	case *lmos.WriteMultipleProperties:
		return t.checkWriteMultiple(b.Data)
	case *lmos.ObserveProperty:
		p, r := t.property(b.Name)
		if r != nil {
			return r
		}
		if !p.Observable {
			return refuse(http.StatusMethodNotAllowed, "property %q of Thing %q is not observable", b.Name, t.ID)
		}
	case *lmos.UnobserveProperty:
		_, r := t.property(b.Name)
		return r
	case *lmos.SubscribeEvent:
		return t.event(b.Event)
	case *lmos.UnsubscribeEvent:
		return t.event(b.Event)
	case *lmos.SubscribeAllEvents, *lmos.UnsubscribeAllEvents:
		if len(t.Events) == 0 {
			return refuse(http.StatusNotFound, "Thing %q has no events to %s", t.ID, m.Type())
		}
	case *lmos.ActionStatus, *lmos.PropertyReading, *lmos.PropertyReadings, *lmos.Event, *lmos.Error:
		return refuse(http.StatusBadRequest, "a consumer sends requests; %s is sent by Things, so it is not forwarded to Thing %q", m.Type(), t.ID)
	default:
		return refuse(http.StatusBadRequest, "the message to Thing %q has type %q, which the gateway does not forward", t.ID, m.Type())
	}
	return nil
}

func (t *Thing) action(name string) (*Action, *Refusal) {
	if a, ok := t.Actions[name]; ok {
		return a, nil
	}
	return nil, refuse(http.StatusNotFound, "Thing %q has no action %q", t.ID, name)
}

func (t *Thing) property(name string) (*Property, *Refusal) {
	if p, ok := t.Properties[name]; ok {
		return p, nil
	}
	return nil, refuse(http.StatusNotFound, "Thing %q has no property %q", t.ID, name)
}

func (t *Thing) writableProperty(name string) (*Property, *Refusal) {
	p, r := t.property(name)
	if r != nil {
		return nil, r
	}
	if p.ReadOnly {
		return nil, refuse(http.StatusMethodNotAllowed, "property %q of Thing %q is read-only: it cannot be written", name, t.ID)
	}
	return p, nil
}

func (t *Thing) event(name string) *Refusal {
	if _, ok := t.Events[name]; ok {
		return nil
	}
	return refuse(http.StatusNotFound, "Thing %q has no event %q", t.ID, name)
}

// checkWriteMultiple checks each member of a writeMultipleProperties message in document
// order and refuses for the first one at fault, so the consumer learns the first mistake
// it wrote.
func (t *Thing) checkWriteMultiple(data json.RawMessage) *Refusal {
	members, ok := objectMembers(data)
	if !ok {
		return refuse(http.StatusBadRequest, "the data of writeMultipleProperties to Thing %q is not a JSON object of property names and values", t.ID)
	}
	for _, m := range members {
		p, r := t.writableProperty(m.name)
		if r != nil {
			return r
		}
		if r := t.checkValue(p.Schema, m.value, "the value of property", m.name); r != nil {
			return r
		}
	}
	return nil
}

// checkValue validates a value the message carries. subject and name say what the value
// is, e.g. `the input of action` "getWeather".
func (t *Thing) checkValue(s *Schema, value json.RawMessage, subject, name string) *Refusal {
	err := s.Validate(value)
	if err == nil {
		return nil
	}
	var serr *SchemaError
	if errors.As(err, &serr) {
		return refuse(http.StatusBadRequest, "%s %q of Thing %q does not match its data schema: %s", subject, name, t.ID, serr.list())
	}
	// The TD is at fault, and the Thing behind the gateway is the one to fix it.
	return refuse(http.StatusBadGateway, "%s %q of Thing %q cannot be checked: %v", subject, name, t.ID, err)
}
