package jsonld

import (
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// maxContexts bounds the processed-context cache. The TDs of one directory
// share a handful of @context values, so this only matters against a client
// that sends a new context with every registration.
const maxContexts = 256

// Expander expands TDs with a Loader; safe for concurrent use.
//
// Processed @context values are kept per distinct value, which makes
// ExpandIRI cheap enough for every write. Expand does not use them: most of
// an expansion is json-gold processing the TD context's scoped contexts again
// for every affordance and form, and handing it a processed top-level context
// saved about 7% on agent-4k.json while depending on its internals.
type Expander struct {
	loader   *Loader
	contexts *contextCache
}

// NewExpander returns an Expander that loads contexts with l.
func NewExpander(l *Loader) *Expander {
	return &Expander{
		loader:   l,
		contexts: &contextCache{max: maxContexts, lru: list.New(), byKey: make(map[string]*list.Element)},
	}
}

func (e *Expander) options() *ld.JsonLdOptions {
	opts := ld.NewJsonLdOptions("")
	// The TD 1.1 context declares "@version": 1.1, which json-gold rejects in
	// json-ld-1.0 mode.
	opts.ProcessingMode = ld.JsonLd_1_1
	opts.DocumentLoader = e.loader
	return opts
}

// Expand returns the JSON-LD expanded form of doc. When a context cannot be
// loaded it returns a *ContextError and no output; any other error means doc
// is not valid JSON-LD.
func (e *Expander) Expand(doc []byte) ([]byte, error) {
	input, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	return e.expand(input)
}

// maxMissingContexts bounds how many unavailable contexts ExpandPartial
// leaves out before it gives up: each costs one more expansion.
const maxMissingContexts = 8

// ExpandPartial is Expand for a document that must be expanded as far as
// possible: a context that cannot be loaded is left out wherever the document
// refers to it, and incomplete says which ones and why (the terms they define
// expand as if undefined, so JSON-LD drops them). err means there is no
// expansion at all.
func (e *Expander) ExpandPartial(doc []byte) (expanded []byte, incomplete string, err error) {
	input, err := decodeDocument(doc)
	if err != nil {
		return nil, "", err
	}
	var missing []string
	for {
		out, err := e.expand(input)
		cerr, ok := errors.AsType[*ContextError](err)
		if !ok || len(missing) == maxMissingContexts {
			return out, strings.Join(missing, "; "), err
		}
		missing = append(missing, cerr.Error())
		if !dropContext(&input, cerr.URL) {
			return nil, strings.Join(missing, "; "), err
		}
	}
}

func decodeDocument(doc []byte) (any, error) {
	var input any
	if err := json.Unmarshal(doc, &input); err != nil {
		return nil, fmt.Errorf("jsonld: %w", err)
	}
	return input, nil
}

func (e *Expander) expand(input any) ([]byte, error) {
	opts := e.options()
	var expanded any
	err := guard(func() (err error) {
		// JsonLdApi rather than JsonLdProcessor: the processor would treat a
		// top-level JSON string as a URL and load it.
		expanded, err = ld.NewJsonLdApi().Expand(ld.NewContext(nil, opts), "", input, opts, false, nil)
		return err
	})
	if err != nil {
		return nil, expansionError(err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(topLevel(expanded)); err != nil {
		return nil, fmt.Errorf("jsonld: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// dropContext removes every reference to the context url from the @context
// members of v, at any depth, and reports whether there was one.
func dropContext(v *any, url string) bool {
	dropped := false
	switch node := (*v).(type) {
	case map[string]any:
		if c, ok := node["@context"]; ok {
			switch c := c.(type) {
			case string:
				if c == url {
					delete(node, "@context")
					dropped = true
				}
			case []any:
				kept := slices.DeleteFunc(c, func(entry any) bool { return entry == url })
				dropped = len(kept) < len(c)
				node["@context"] = kept
			}
		}
		for key, member := range node {
			if key != "@context" && dropContext(&member, url) {
				dropped = true
			}
		}
	case []any:
		for i := range node {
			if dropContext(&node[i], url) {
				dropped = true
			}
		}
	}
	return dropped
}

// topLevel applies the final steps of the JSON-LD expansion algorithm, which
// JsonLdApi.Expand leaves to its caller: unwrap a lone @graph and always
// return an array.
func topLevel(expanded any) []any {
	if m, ok := expanded.(map[string]any); ok {
		if g, ok := m["@graph"]; ok && len(m) == 1 {
			expanded = g
		} else if len(m) == 0 {
			expanded = nil
		}
	}
	switch v := expanded.(type) {
	case nil:
		return []any{}
	case []any:
		return v
	default:
		return []any{v}
	}
}

// ExpandIRI expands a compact IRI or term against the @context value of a TD
// (the raw @context member as decoded JSON, any shape), without expanding a
// document. Terms expand against @vocab, like keys and @type values do; a
// string that is already an absolute IRI, or that reads as one because its
// prefix is not a JSON-LD 1.1 prefix (see the package documentation), comes
// back unchanged.
func (e *Expander) ExpandIRI(atContext any, term string) (string, error) {
	active, err := e.context(atContext)
	if err != nil {
		return "", err
	}
	var iri string
	err = guard(func() (err error) {
		iri, err = active.ExpandIri(term, false, true, nil, nil)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("jsonld: %s: %w", term, err)
	}
	return iri, nil
}

// context returns the processed form of a raw @context value, keyed by its
// canonical JSON (encoding/json sorts object keys).
func (e *Expander) context(raw any) (*ld.Context, error) {
	key, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("jsonld: @context: %w", err)
	}
	if c, ok := e.contexts.get(string(key)); ok {
		return c, nil
	}
	// Decoding the key again gives json-gold the float64 numbers it compares
	// against (a caller may have decoded with UseNumber) and a value the
	// caller cannot change under the cached context.
	var fresh any
	if err := json.Unmarshal(key, &fresh); err != nil {
		return nil, fmt.Errorf("jsonld: @context: %w", err)
	}
	var c *ld.Context
	err = guard(func() (err error) {
		c, err = ld.NewContext(nil, e.options()).Parse(fresh)
		return err
	})
	if err != nil {
		return nil, expansionError(err)
	}
	e.contexts.put(string(key), c)
	return c, nil
}

// guard turns a panic in f into an error. json-gold asserts types without
// checking them and follows nil term definitions (a non-boolean "@protected"
// panics, and so does "x:y" once "x" is defined as null), and all of it is
// client input.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("json-gold failed on this input: %v", r)
		}
	}()
	return f()
}

// expansionError surfaces a *ContextError from inside json-gold's wrapping,
// so callers can tell "a context is missing" from "the document is wrong".
func expansionError(err error) error {
	if cerr, ok := errors.AsType[*ContextError](err); ok {
		return cerr
	}
	return fmt.Errorf("jsonld: %w", err)
}

// contextCache is a mutex-guarded LRU of processed contexts.
type contextCache struct {
	mu    sync.Mutex
	max   int
	lru   *list.List // of *cachedContext, most recently used first
	byKey map[string]*list.Element
}

type cachedContext struct {
	key string
	ctx *ld.Context
}

func (c *contextCache) get(key string) (*ld.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cachedContext).ctx, true
}

func (c *contextCache) put(key string, ctx *ld.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		return
	}
	c.byKey[key] = c.lru.PushFront(&cachedContext{key: key, ctx: ctx})
	if c.lru.Len() > c.max {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.byKey, oldest.Value.(*cachedContext).key)
	}
}
