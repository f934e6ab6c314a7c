package directory

import (
	"slices"
	"strings"

	"github.com/lmosdir/lmosdir/td"
)

// Expander is the JSON-LD processing the directory needs (package jsonld provides it).
type Expander interface {
	// ExpandPartial returns the expanded form of a TD. When a context cannot be loaded it
	// expands without it and says so in incomplete; err means there is no expansion at all.
	ExpandPartial(doc []byte) (expanded []byte, incomplete string, err error)
	// ExpandIRI expands a compact IRI or term against a TD's @context value.
	ExpandIRI(atContext any, term string) (string, error)
}

// indexOf derives the search index of a validated TD: raw as registered, doc as decoded.
// With no expander, types are indexed as written only.
func indexOf(raw []byte, doc map[string]any, expander Expander) Index {
	x := td.ExtractIndexFrom(raw, doc)
	ix := Index{
		Kind:        x.Kind,
		Types:       x.Types,
		TypeIRIs:    append([]string(nil), x.Types...),
		VendorName:  x.Vendor.Name,
		VendorURL:   x.Vendor.URL,
		Title:       plainString(doc["title"]),
		Description: plainString(doc["description"]),
		Actions:     affordanceNames(x.Actions),
		Properties:  affordanceNames(x.Properties),
		Events:      affordanceNames(x.Events),
		Text:        x.Text,
	}
	if expander != nil {
		for _, t := range x.Types {
			if iri, err := expander.ExpandIRI(doc["@context"], t); err == nil && !slices.Contains(ix.TypeIRIs, iri) {
				ix.TypeIRIs = append(ix.TypeIRIs, iri)
			}
		}
	}
	for _, c := range x.Capabilities {
		ix.Capabilities = append(ix.Capabilities, c.ID)
		if c.Version != "" {
			ix.Capabilities = append(ix.Capabilities, c.ID+"@"+c.Version)
		}
	}
	for _, p := range append(x.Schemes, x.Subprotocols...) {
		if p = strings.ToLower(p); !slices.Contains(ix.Protocols, p) {
			ix.Protocols = append(ix.Protocols, p)
		}
	}
	return ix
}

func plainString(v any) string {
	s, _ := v.(string)
	return s
}

func affordanceNames(list []td.Affordance) []string {
	if len(list) == 0 {
		return nil
	}
	names := make([]string, len(list))
	for i, a := range list {
		names[i] = a.Name
	}
	return names
}
